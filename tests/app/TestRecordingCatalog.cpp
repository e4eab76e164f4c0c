// RecordingCatalog: which runs of a session offer their recording as "This recording", and what
// it costs to find out. A small snapshot is read (its entries counted, its recorded config
// taken from the file); a big one is NOT read again after its import — that would cost as much
// as the import itself while the first view is drawn — so its facts come from the run.
#include <QtTest>
#include <QFile>
#include <QTemporaryDir>

#include "app/gui/RecordingSource.h"

using allocscope::app::RecordingCatalog;
namespace storage = allocscope::storage;

namespace {

storage::RunRow snapshotRun(int number, const QString& path, const char* config) {
    storage::RunRow row;
    row.number = number;
    row.info.sourceKind = "snapshot";
    row.info.source = (path + QStringLiteral(" (snapshot device 0)")).toStdString();
    row.info.config = config;
    row.info.gpu = "h100-80gb";
    return row;
}

// A file of `size` zero bytes (sparse): not a snapshot any reader would accept.
QString zeroFile(const QTemporaryDir& dir, const char* name, qint64 size) {
    const QString path = dir.filePath(QString::fromLatin1(name));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !file.resize(size)) return {};
    return path;
}

}  // namespace

class TestRecordingCatalog : public QObject {
    Q_OBJECT
private slots:
    void aSmallSnapshotIsReadAndCounted() {
        const QString path = QStringLiteral(ALLOCSCOPE_TEST_DATA "/traces/frag101__default.pickle");
        const auto sources = RecordingCatalog::collect({snapshotRun(1, path, "")});
        QVERIFY(sources.contains(1));
        QVERIFY(sources[1].traceEntries > 0);
        QVERIFY(sources[1].description().contains(QStringLiteral("trace entries,")));
    }

    void aSmallUnreadableFileOffersNothing() {
        // Read, found not to be a snapshot: nothing to replay.
        QTemporaryDir dir;
        const QString small = zeroFile(dir, "small.pickle", 4096);
        QVERIFY(!small.isEmpty());
        QVERIFY(RecordingCatalog::collect({snapshotRun(1, small, "")}).isEmpty());
    }

    void aBigSnapshotIsNotReadAgain() {
        // The same kind of content at the big-file size is offered without being read: had it
        // been read it would have been refused like the small one.
        QTemporaryDir dir;
        const QString big = zeroFile(dir, "big.pickle", static_cast<qint64>(RecordingCatalog::kCountFilesBelow));
        QVERIFY(!big.isEmpty());
        const auto sources = RecordingCatalog::collect({snapshotRun(3, big, "expandable_segments:True")});
        QVERIFY(sources.contains(3));
        QCOMPARE(sources[3].traceEntries, qint64(-1));
        QCOMPARE(sources[3].recordedConfig, QStringLiteral("expandable_segments:True"));
        QCOMPARE(sources[3].path, big);
        const QString text = sources[3].description();
        QVERIFY2(text.contains(QStringLiteral("not counted")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("as the import replayed it")), qPrintable(text));
    }

    void aMissingFileOffersNothing() {
        QVERIFY(RecordingCatalog::collect({snapshotRun(1, QStringLiteral("/nonexistent/x.pickle"), "")}).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestRecordingCatalog)
#include "TestRecordingCatalog.moc"
