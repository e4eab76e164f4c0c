// Crash safety: a recording killed with SIGKILL right after a commit leaves a session that
// opens read-only, shows the run as interrupted and holds every committed event; recording
// into it again works and leaves no sidecar files.
#include <QtTest>

#include <QProcess>

#include "StorageTestSupport.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"

using namespace allocscope;
using namespace storagetest;

class TestSessionCrash : public QObject {
    Q_OBJECT

private slots:
    void killedRecordingKeepsCommittedBatches() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("killed.allocscope").toStdString();
        QProcess child;
        child.start(QStringLiteral(SESSION_RECORD_HELPER), {QString::fromStdString(path)});
        QVERIFY(child.waitForStarted());
        std::uint64_t committed = 0;
        // Wait for the first "committed N" line (deterministic: no timing involved).
        while (committed == 0) {
            QVERIFY2(child.waitForReadyRead(60000), "the recording child printed nothing");
            while (child.canReadLine()) {
                const QByteArray line = child.readLine().trimmed();
                if (line.startsWith("committed ")) committed = line.mid(10).toULongLong();
                if (committed > 0) break;
            }
        }
        child.kill();  // SIGKILL
        QVERIFY(child.waitForFinished());
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);

        const QByteArray before = QByteArray::fromStdString(readAll(path));
        {
            storage::SessionReader reader(path);
            const auto runs = reader.runs();
            QCOMPARE(runs.size(), std::size_t(1));
            QCOMPARE(runs[0].status, storage::RunStatus::Interrupted);
            QVERIFY2(runs[0].eventCount >= committed, qPrintable(QString("%1 < %2").arg(runs[0].eventCount).arg(committed)));
            // Every committed event can be read and replayed.
            const auto page = reader.events(1, 0, runs[0].eventCount);
            QCOMPARE(page.events.size(), runs[0].eventCount);
            for (std::size_t i = 0; i < page.events.size(); ++i) QCOMPARE(page.events[i].seq, std::uint64_t(i));
            storage::StateCursor cursor(reader, 1);
            const auto state = cursor.load(runs[0].eventCount - 1);
            QVERIFY(!state.segments.empty());
            QVERIFY(cursor.model().anomalies() == 0);
        }
        QCOMPARE(QByteArray::fromStdString(readAll(path)), before);  // reading wrote nothing

        // Recording into it again: the old run stays interrupted, the new one completes, and
        // closing the writer leaves no sidecar.
        {
            storage::SessionWriter writer(path);
            recordProgram(&writer, randomProgram(8, 500), "default");
        }
        QVERIFY(!sidecarsPresent(path));
        storage::SessionReader reader(path);
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t(2));
        QCOMPARE(runs[0].status, storage::RunStatus::Interrupted);
        QCOMPARE(runs[1].status, storage::RunStatus::Complete);
        QCOMPARE(runs[1].number, 2);
    }
};

QTEST_GUILESS_MAIN(TestSessionCrash)
#include "TestSessionCrash.moc"
