// Several allocscope-cli processes recording into one session at once (issue #17). Real child
// processes, started together: every one exits 0, the run numbers they print are distinct and
// together 1..N, each number names the run the process recorded, the file is intact (every page
// checked) and nothing is left beside it. The first case reproduces the bug this fixes: two
// processes creating the same new session used to lose a run ("empty file, not an AllocScope
// session" or "a SQLite database of another application").
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>

#include <map>
#include <set>

#include "storage/session/SessionReader.h"

using namespace allocscope;

namespace {

struct Child {
    QStringList args;
    std::unique_ptr<QProcess> process;
};

struct Printed {
    int number = 0;
    QString name;  // "" for `import`, which prints the number alone
};

// Starts every command before waiting for any, so they race for the file.
std::vector<Child> startAll(const std::vector<QStringList>& commands) {
    std::vector<Child> children;
    for (const QStringList& args : commands) {
        Child child{args, std::make_unique<QProcess>()};
        child.process->start(qEnvironmentVariable("ALLOCSCOPE_CLI"), args);
        children.push_back(std::move(child));
    }
    return children;
}

// Waits for each child (a hung child fails the test at the CTest timeout) and collects the
// "run N: NAME" lines it printed (stdout, and stderr for compare).
bool finishAll(std::vector<Child>& children, std::vector<Printed>& printed, QString& why) {
    static const QRegularExpression line(QStringLiteral("^run (\\d+)(?:: (.*))?$"), QRegularExpression::MultilineOption);
    bool ok = true;
    for (Child& child : children) {
        child.process->waitForFinished(-1);
        const QString out = QString::fromUtf8(child.process->readAllStandardOutput());
        const QString err = QString::fromUtf8(child.process->readAllStandardError());
        if (child.process->exitStatus() != QProcess::NormalExit || child.process->exitCode() != 0) {
            ok = false;
            why += child.args.join(' ') + QStringLiteral(" -> exit %1: ").arg(child.process->exitCode()) + err + '\n';
        }
        for (const QString& text : {out, err}) {
            auto it = line.globalMatch(text);
            while (it.hasNext()) {
                const QRegularExpressionMatch m = it.next();
                printed.push_back(Printed{m.captured(1).toInt(), m.captured(2)});
            }
        }
    }
    return ok;
}

// The printed numbers are 1..expected, each once, and name the stored runs; the file is intact.
void checkSession(const std::string& path, const std::vector<Printed>& printed, std::size_t expected) {
    std::set<int> numbers;
    for (const Printed& p : printed) QVERIFY2(numbers.insert(p.number).second, qPrintable(QStringLiteral("run %1 printed twice").arg(p.number)));
    QCOMPARE(numbers.size(), expected);
    QCOMPARE(*numbers.begin(), 1);
    QCOMPARE(*numbers.rbegin(), static_cast<int>(expected));
    storage::SessionReader reader(path, true);
    const std::vector<storage::RunRow> runs = reader.runs();
    QCOMPARE(runs.size(), expected);
    for (const storage::RunRow& run : runs) QVERIFY(run.status == storage::RunStatus::Complete);
    for (const Printed& p : printed) {
        if (!p.name.isEmpty()) QCOMPARE(QString::fromStdString(reader.run(p.number).info.name), p.name);
    }
}

}  // namespace

class TestSessionWriters : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    // Nothing but the session: no temporary file of a creation, no -wal / -shm after the last writer.
    void onlyTheSessionIn(const QString& folder, const QString& name) {
        QCOMPARE(QDir(folder).entryList(QDir::Files | QDir::Hidden), QStringList{name});
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY(QFileInfo(qEnvironmentVariable("ALLOCSCOPE_CLI")).isExecutable());
    }

    void processesCreatingOneNewSessionAllLand() {
        for (int round = 0; round < 2; ++round) {
            const QString folder = dir_.filePath(QStringLiteral("create-%1").arg(round));
            QVERIFY(QDir().mkpath(folder));
            const QString path = folder + QStringLiteral("/c.allocscope");
            std::vector<QStringList> commands;
            for (int seed = 1; seed <= 4; ++seed) {
                commands.push_back({"run", "fragmentation-101", "--seed", QString::number(seed), "--db", path});
            }
            std::vector<Child> children = startAll(commands);
            std::vector<Printed> printed;
            QString why;
            QVERIFY2(finishAll(children, printed, why), qPrintable(why));
            checkSession(path.toStdString(), printed, 4);
            onlyTheSessionIn(folder, QStringLiteral("c.allocscope"));
        }
    }

    // The stress case: every verb that records, at once, into one new session; the replay and
    // the import create the optional tables (run_verdict, history_start) while others write.
    void everyRecordingVerbAtOnce() {
        const QString folder = dir_.filePath(QStringLiteral("stress"));
        QVERIFY(QDir().mkpath(folder));
        const QString path = folder + QStringLiteral("/s.allocscope");
        const QString data = QStringLiteral(ALLOCSCOPE_TEST_DATA);
        const std::vector<QStringList> commands = {
            {"run", "fragmentation-101", "--db", path},
            {"replay", data + "/traces/frag101__default.pickle", "--db", path},
            {"compare", "fragmentation-101", "--config", "", "--config", "expandable_segments:True", "--db", path},
            {"import", data + "/pools/stateonly_train__default.pickle", "--db", path},
            {"run", "multi-stream", "--db", path},
            {"compare", "multi-stream", "--config", "", "--config", "max_split_size_mb:128", "--db", path},
        };
        std::vector<Child> children = startAll(commands);
        std::vector<Printed> printed;
        QString why;
        QVERIFY2(finishAll(children, printed, why), qPrintable(why));
        checkSession(path.toStdString(), printed, 8);
        onlyTheSessionIn(folder, QStringLiteral("s.allocscope"));

        // What each verb stores beside its runs arrived too.
        storage::SessionReader reader(path.toStdString(), false);
        int exact = 0, historyStarts = 0;
        for (const storage::RunRow& run : reader.runs()) {
            exact += run.verdict.kind == storage::VerdictKind::Exact ? 1 : 0;
            historyStarts += run.historyStart ? 1 : 0;
        }
        QCOMPARE(exact, 2);  // the replay and the import, each under its own settings
        QCOMPARE(historyStarts, 1);
    }
};

QTEST_GUILESS_MAIN(TestSessionWriters)
#include "TestSessionWriters.moc"
