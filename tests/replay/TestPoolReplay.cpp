// Private pools: snapshots of a torch.cuda.graph capture, of torch.compile(mode="reduce-overhead")
// (CUDA graph trees) and of torch.cuda.MemPool + use_mem_pool, recorded with torch 2.11 on an H100
// (tests/data/pools). Replayed under their own config each must reproduce PyTorch's final
// memory_stats() (all 122 keys), memory_summary(), every segment event and the final layout with
// each segment's pool id.
#include <QtTest>

#include "ReplayTestData.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

class TestPoolReplay : public QObject {
    Q_OBJECT

private slots:
    void pools_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"cudagraph_mlp__default", "cudagraph_mlp__expandable", "cppstacks_train__default",
                                 "compile_reduce_overhead__default", "compile_reduce_overhead__expandable",
                                 "mempool_mix__default", "mempool_mix__expandable"}) {
            QTest::newRow(name) << QString(name);
        }
    }
    void pools() { check(false); }

    // With a sink (an import, the GUI): only the accepted attempt of the pool inference reaches
    // it, and that replay is exact too.
    void observed_data() { pools_data(); }
    void observed() { check(true); }

    // A MemPool's destructor releases its pool with a sync of its own; the replay tells its
    // releases from torch.cuda.empty_cache()'s by the Python stack. Give the pool's release the
    // explicit call's stack and the replay folds it into that call: one sync fewer, same layout.
    void memPoolReleaseToldByStack() {
        const QString dir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/pools";
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth("mempool_mix__expandable", dir);
        alloc::RecordedTrace trace = storage::importTraceFile((dir + "/mempool_mix__expandable.pickle").toStdString()).front();
        const std::size_t n = trace.entries.size();
        QCOMPARE(trace.entries[n - 1].action, alloc::EventAction::SegmentUnmap);  // the MemPool's
        QCOMPARE(trace.entries[n - 2].action, alloc::EventAction::SegmentUnmap);  // empty_cache()'s
        const std::int64_t syncs = truth.stats.at("num_sync_all_streams");
        alloc::ReplayResult whole = alloc::TraceReplayer::replay(trace, replaytest::optionsFor(truth));
        QVERIFY(whole.exact());
        QCOMPARE(whole.stats.num_sync_all_streams, syncs);

        trace.entries[n - 1].stackId = trace.entries[n - 2].stackId;
        alloc::ReplayResult folded = alloc::TraceReplayer::replay(trace, replaytest::optionsFor(truth));
        QVERIFY2(folded.exact(), qPrintable(replaytest::describeInexact(folded)));
        QCOMPARE(folded.stats.num_sync_all_streams, syncs - 1);
    }

private:
    class CountingSink final : public alloc::EventSink {
    public:
        void onEvent(const alloc::Event&) override { ++events; }
        std::uint64_t events = 0;
    };

    void check(bool observed) {
        QFETCH(QString, name);
        const QString dir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/pools";
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth(name, dir);
        QVERIFY2(truth.loaded, "cannot read the ground-truth JSON");
        const auto traces = storage::importTraceFile((dir + "/" + name + ".pickle").toStdString());
        QCOMPARE(traces.size(), std::size_t{1});
        const alloc::RecordedTrace& trace = traces.front();
        alloc::ReplayOptions options = replaytest::optionsFor(truth);
        CountingSink sink;
        if (observed) options.sink = &sink;
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, options);
        QVERIFY2(result.exact(), qPrintable(replaytest::describeInexact(result)));
        if (observed) QCOMPARE(sink.events, result.events);
        // The final layout carries the pools: every segment's pool id as PyTorch wrote it.
        if (trace.finalSegments) {
            QCOMPARE(result.segments.size(), trace.finalSegments->size());
            for (std::size_t i = 0; i < result.segments.size(); ++i) {
                QVERIFY2(result.segments[i].poolId == (*trace.finalSegments)[i].poolId,
                         qPrintable(QString("segment %1: pool (%2,%3), snapshot (%4,%5)")
                                        .arg(i)
                                        .arg(result.segments[i].poolId.first)
                                        .arg(result.segments[i].poolId.second)
                                        .arg((*trace.finalSegments)[i].poolId.first)
                                        .arg((*trace.finalSegments)[i].poolId.second)));
            }
        }
        const QString diff = replaytest::diffStats(truth.stats, result.stats);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QCOMPARE(QString::fromStdString(result.summary), QString::fromStdString(truth.summary));
    }
};

QTEST_GUILESS_MAIN(TestPoolReplay)
#include "TestPoolReplay.moc"
