// Private pools: snapshots of a torch.cuda.graph capture, of torch.compile(mode="reduce-overhead")
// (CUDA graph trees) and of torch.cuda.MemPool + use_mem_pool, recorded with torch 2.11 on an H100
// (tests/data/pools). Replayed under their own config each must reproduce PyTorch's final
// memory_stats() (all 122 keys), memory_summary(), every segment event and the final layout with
// each segment's pool id.
#include <QtTest>

#include "ReplayTestData.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/replay/PoolRouting.h"
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

    // Held-out programs (tests/data/pools-heldout, recorded on an H200 with torch 2.11, issue 36)
    // that replay exactly on every key. cudagraph_train needs two rules: the allocations made in
    // CUDAGraph::capture_begin come from the default pool, and the capture's own allocations on
    // the capture stream from the graph's pool (ReplayRun::beginRoute, capturePrior); and a
    // recorder that shortens every file name to its base name still marks empty_cache()'s frames.
    // cudagraph_train_frac (under a memory fraction, with OOMs caught) needs a third: an
    // allocation's retry (release_cached_blocks) frees the segments of the pools already freeable,
    // so a release of a pool's segment in an allocation's step says its graph was gone
    // (ReplayRun::releaseRetriedPools); explaining it by an explicit empty_cache() instead gave one
    // retry fewer and one sync more than PyTorch. compile_gpt2 (default) needs a fourth: a final
    // private segment names the pool of allocations in its range only since the last cudaFree
    // there (PoolRouting: an optimizer's default-pool segment, freed by the graph trees'
    // empty_cache(), came back at the same address as the graph pool's).
    void heldout_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"cudagraph_train__default", "cudagraph_train__msplit128", "cudagraph_train__expandable",
                                 "cudagraph_train_frac__default", "cudagraph_train_frac__msplit128",
                                 "compile_gpt2__default", "compile_gpt2__expandable", "compile_gpt2_infer__default", "compile_gpt2_infer__expandable"}) {
            QTest::newRow(name) << QString(name);
        }
    }
    void heldout() { check(false, "/pools-heldout"); }

    // Two graphs captured into one pool (pool=g1.pool()) on torch.cuda.graph's capture stream.
    // Allocations of a capture whose segments did not survive carry no pool in the trace; c10's
    // get_pool sends every request made on the capturing stream to the capture's pool, so the
    // replay guesses that pool for them (ReplayRun::capturePrior). Guessing the default pool
    // instead diverged at entry 256 (empty_cache() released the pool's segments among the default
    // pool's). Its one sync without a trace entry (g2's __enter__) is checked in
    // TestPoolSyncRules::syncsWithoutEvidence.
    void sharedPoolCaptureStream() {
        const QString dir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/pools-heldout";
        const replaytest::GroundTruth truth = replaytest::loadGroundTruth("shared_pool_graphs__default", dir);
        QVERIFY2(truth.loaded, "cannot read the ground-truth JSON");
        const alloc::RecordedTrace trace =
            storage::importTraceFile((dir + "/shared_pool_graphs__default.pickle").toStdString()).front();
        const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, replaytest::optionsFor(truth));
        QVERIFY2(result.exact(), qPrintable(replaytest::describeInexact(result)));
        QCOMPARE(result.segments.size(), trace.finalSegments->size());
        for (std::size_t i = 0; i < result.segments.size(); ++i) {
            QVERIFY(result.segments[i].poolId == (*trace.finalSegments)[i].poolId);
        }
    }

    // PoolRouting's rule 3 takes a capture's prior: the allocation goes to that pool, still as a
    // guess, and flipping the guess sends it to the default pool (not to the inferred pool).
    void routingPriorIsAGuess() {
        const alloc::RecordedTrace trace;
        alloc::SimulatedDevice device(80ull << 30, 0);
        const alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device);
        alloc::PoolRouting routing(trace);
        const alloc::PoolId graphPool{3, 0};
        bool guessed = false;
        QVERIFY(routing.poolFor(7, 0x7f0000000000ull, allocator, guessed).isDefault());
        QVERIFY(guessed);
        QCOMPARE(routing.poolFor(8, 0x7f0000000000ull, allocator, guessed, graphPool), graphPool);
        QVERIFY(guessed);
        QVERIFY(routing.flip(8));
        QVERIFY(routing.flip(7));
        routing.startReplay();
        QVERIFY(routing.poolFor(8, 0x7f0000000000ull, allocator, guessed, graphPool).isDefault());
        QVERIFY(!guessed);
        QCOMPARE(routing.poolFor(7, 0x7f0000000000ull, allocator, guessed), alloc::kInferredPool);
        QVERIFY(!routing.flip(8));  // no cycles
    }

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

    void check(bool observed, const char* folder = "/pools") {
        QFETCH(QString, name);
        const QString dir = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + folder;
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
