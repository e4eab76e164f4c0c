// Conformance: every shared PyTorch 2.11 trace, replayed under its own config, memory fraction and
// total memory, reproduces PyTorch's final memory_stats() (122 keys), every recorded segment event
// (address, size, step), every allocation's address, the final segment and block layout and the
// memory_summary() text -- from the pickle, and from the RMM CSV where it carries enough.
#include <QDir>
#include <QFile>
#include <QtTest>

#include "ReplayTestData.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

class TestReplayConformance : public QObject {
    Q_OBJECT

private:
    void traceRows(bool csv) {
        QTest::addColumn<QString>("name");
        const QStringList names = replaytest::traceNames();
        QVERIFY2(names.size() >= 12, "the 12 shared traces are missing from tests/data/traces");
        for (const QString& name : names) {
            // frag101 calls empty_cache(), which only its segment_free events show: the CSV has none.
            if (csv && name.startsWith("frag101")) continue;
            QTest::newRow(name.toUtf8().constData()) << name;
        }
    }

private slots:
    void pickle_data() { traceRows(false); }
    void pickle() {
        QFETCH(QString, name);
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name);
        QVERIFY2(truth.loaded, "cannot read the ground-truth JSON");
        const auto traces = storage::importTraceFile((replaytest::tracesDir() + "/" + name + ".pickle").toStdString());
        QCOMPARE(traces.size(), std::size_t{1});
        const alloc::RecordedTrace& trace = traces.front();
        QVERIFY(trace.settings.has_value());
        QCOMPARE(*trace.settings, truth.conf);
        QVERIFY(trace.finalSegments.has_value());

        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, replaytest::optionsFor(truth));
        QVERIFY2(result.exact(), qPrintable(replaytest::describeInexact(result)));
        const QString diff = replaytest::diffStats(truth.stats, result.stats);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QCOMPARE(QString::fromStdString(result.summary), QString::fromStdString(truth.summary));
        QCOMPARE(result.segments.size(), trace.finalSegments->size());
        // frag101's one explicit empty_cache() (num_sync_all_streams 1) must have been found.
        if (name.startsWith("frag101")) QCOMPARE(result.emptyCacheSteps.size(), std::size_t{1});
    }

    // Small runs recorded on an H100 with torch 2.11 by tests/data/scripts/make_replay_cases.py:
    // two streams with record_stream (a free that never completes), GC under a memory fraction,
    // an OOM ending, repeated empty_cache(), the list form of roundup_power2_divisions.
    void recordedCases_data() {
        QTest::addColumn<QString>("name");
        const QString dir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/replay";
        const QStringList files = QDir(dir).entryList({"*.pickle"}, QDir::Files, QDir::Name);
        QVERIFY2(files.size() >= 5, "tests/data/replay is missing its recorded cases");
        for (const QString& f : files) QTest::newRow(f.toUtf8().constData()) << f.chopped(7);
    }
    void recordedCases() {
        QFETCH(QString, name);
        const QString dir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/replay";
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, dir);
        QVERIFY2(truth.loaded, "cannot read the ground-truth JSON");
        const auto traces = storage::importTraceFile((dir + "/" + name + ".pickle").toStdString());
        QCOMPARE(traces.size(), std::size_t{1});
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(traces.front(), replaytest::optionsFor(truth));
        QVERIFY2(result.exact(), qPrintable(replaytest::describeInexact(result)));
        const QString diff = replaytest::diffStats(truth.stats, result.stats);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QCOMPARE(QString::fromStdString(result.summary), QString::fromStdString(truth.summary));
    }

    void csv_data() { traceRows(true); }
    void csv() {
        QFETCH(QString, name);
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name);
        QVERIFY2(truth.loaded, "cannot read the ground-truth JSON");
        const auto fromCsv = storage::importTraceFile((replaytest::tracesDir() + "/" + name + ".csv").toStdString());
        const auto fromPickle = storage::importTraceFile((replaytest::tracesDir() + "/" + name + ".pickle").toStdString());
        QCOMPARE(fromCsv.size(), std::size_t{1});
        QVERIFY(!fromCsv.front().hasSegmentEvents);
        QVERIFY(!fromCsv.front().settings.has_value());

        // The CSV replay is checked against the pickle's recording: its segment events step by
        // step and its final layout, although the CSV itself has neither.
        alloc::ReplayOptions options = replaytest::optionsFor(truth);
        options.expected = &fromPickle.front();
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(fromCsv.front(), options);
        QVERIFY2(result.exact(), qPrintable(replaytest::describeInexact(result)));
        const QString diff = replaytest::diffStats(truth.stats, result.stats);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QCOMPARE(QString::fromStdString(result.summary), QString::fromStdString(truth.summary));
    }
};

QTEST_GUILESS_MAIN(TestReplayConformance)
#include "TestReplayConformance.moc"
