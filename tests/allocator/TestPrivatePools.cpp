// Private pools in the allocator itself (reference §12; c10's beginAllocateToPool and friends):
// routing by stream while a capture or use_mem_pool scope is active, pools that empty_cache() may
// not touch until released, the OOM message's "allocated in private pools", use_on_oom, no_split.
#include <QtTest>

#include "AllocatorHarness.h"
#include "allocator/compare/FragmentationMetrics.h"

using namespace allocscope::alloc;
using namespace allocscope::alloc::testing;

namespace {

constexpr PoolId kGraphPool{1, 0};
constexpr PoolId kMemPool{0, 1};
constexpr StreamId kCaptureStream = 7;

std::optional<SegmentInfo> segmentAt(CachingAllocator& allocator, std::uint64_t address) {
    for (const SegmentInfo& s : allocator.segments()) {
        if (address >= s.address && address < s.address + s.totalSize) return s;
    }
    return std::nullopt;
}

}  // namespace

class TestPrivatePools : public QObject {
    Q_OBJECT

private slots:
    // A capture routes its stream's requests to the graph's pool; other streams and requests after
    // the capture ends use the default pool, even when the private pool has a free block.
    void captureRoutesItsStreamOnly() {
        Harness h;
        h.allocator->createPool(kGraphPool);
        h.allocator->beginAllocateToPool(kGraphPool, kCaptureStream, true);
        const std::uint64_t inPool = h.alloc(3 * MiB, kCaptureStream);
        const std::uint64_t eager = h.alloc(3 * MiB, 0);
        QVERIFY(inPool != 0 && eager != 0);
        QCOMPARE(h.allocator->poolOfAddress(inPool), std::optional<PoolId>(kGraphPool));
        QCOMPARE(h.allocator->poolOfAddress(eager), std::optional<PoolId>(PoolId{}));
        QCOMPARE(segmentAt(*h.allocator, inPool)->poolId, kGraphPool);
        QVERIFY(h.allocator->endAllocateToPool(kGraphPool));
        QVERIFY(!h.allocator->endAllocateToPool(kGraphPool));  // no routing left to end

        QVERIFY(h.free(inPool));
        const std::uint64_t after = h.alloc(3 * MiB, kCaptureStream);
        QCOMPARE(h.allocator->poolOfAddress(after), std::optional<PoolId>(PoolId{}));
        QVERIFY(after != inPool);
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }

    // use_mem_pool (no stream filter) routes every stream; the pool's segments carry its id.
    void memPoolRoutesEveryStream() {
        Harness h;
        h.allocator->createPool(kMemPool);
        h.allocator->beginAllocateToPool(kMemPool, std::nullopt, false);
        const std::uint64_t a = h.alloc(1 * MiB, 0);
        const std::uint64_t b = h.alloc(1 * MiB, 3);
        QVERIFY(h.allocator->endAllocateToPool(kMemPool));
        QCOMPARE(h.allocator->poolOfAddress(a), std::optional<PoolId>(kMemPool));
        QCOMPARE(h.allocator->poolOfAddress(b), std::optional<PoolId>(kMemPool));
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }

    // empty_cache() leaves a live pool's free segments alone; once the pool is released (its graph
    // or MemPool is gone) they are freeable and empty_cache() returns them to the device. A capture
    // creates its pool with one use (beginAllocateToPool); ending the capture keeps it.
    void emptyCacheReleasesOnlyFreeablePools() {
        Harness h;
        h.allocator->beginAllocateToPool(kGraphPool, kCaptureStream, true);
        const std::uint64_t a = h.alloc(30 * MiB, kCaptureStream);
        h.allocator->endAllocateToPool(kGraphPool);
        QVERIFY(h.free(a));
        h.allocator->emptyCache();
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(30 * MiB));
        // What the compare table calls releasable agrees: a live pool's free segment is not.
        const FragmentationMetrics kept = FragmentationMetrics::of(h.allocator->segments(), 2 * MiB, 20 * MiB);
        QCOMPARE(kept.releasable, std::uint64_t{0});
        QCOMPARE(kept.strandedFree, std::uint64_t(30 * MiB));
        QVERIFY(h.allocator->releasePool(kGraphPool));
        QVERIFY(!h.allocator->releasePool(kGraphPool));  // no use left
        h.allocator->emptyCache();
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t{0});
        QVERIFY(!h.allocator->poolOfAddress(a));
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }

    // Two graphs' pools freed by one empty_cache(): c10 walks graph_pools_freeable, a hash map
    // whose order ids cannot give a replay; the pools go in the order they became freeable (the
    // order a replay learns from the recording), not by id: the newer graph's pool first here.
    void freeablePoolsGoInTheOrderTheyWereReleased() {
        constexpr PoolId kSecondGraph{2, 0};
        Harness h;
        std::uint64_t first = 0, second = 0;
        for (const auto& [pool, address] : {std::pair{kGraphPool, &first}, std::pair{kSecondGraph, &second}}) {
            h.allocator->beginAllocateToPool(pool, kCaptureStream, true);
            *address = h.alloc(30 * MiB, kCaptureStream);
            h.allocator->endAllocateToPool(pool);
            QVERIFY(h.free(*address));
        }
        QVERIFY(h.allocator->releasePool(kSecondGraph));
        QVERIFY(h.allocator->releasePool(kGraphPool));
        const std::size_t mark = h.mark();
        h.allocator->emptyCache();
        std::vector<std::uint64_t> released;
        for (const Event& e : h.since(mark)) {
            if (e.action == EventAction::SegmentFree) released.push_back(e.address);
        }
        QCOMPARE(released, (std::vector<std::uint64_t>{second, first}));
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }

    // MemPool's destructor: releasePool, then emptyCache(its id). That releases only this pool's
    // free segments (the default pool keeps its cache) and counts a sync; while the pool still has
    // a use it does nothing at all, not even the sync.
    void emptyCacheOfOnePool() {
        Harness h;
        h.allocator->createPool(kMemPool);
        h.allocator->beginAllocateToPool(kMemPool, std::nullopt, false);
        const std::uint64_t inPool = h.alloc(30 * MiB, 0);
        h.allocator->endAllocateToPool(kMemPool);
        h.allocator->releasePool(kMemPool);  // use_mem_pool's scope ends: the MemPool's use stays
        const std::uint64_t eager = h.alloc(30 * MiB, 0);
        QVERIFY(h.free(inPool));
        QVERIFY(h.free(eager));
        const std::int64_t syncs = h.stats().num_sync_all_streams;

        h.allocator->emptyCache(kMemPool);  // still used: nothing
        QCOMPARE(h.stats().num_sync_all_streams, syncs);
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(60 * MiB));

        QVERIFY(h.allocator->releasePool(kMemPool));
        h.allocator->emptyCache(kMemPool);
        QCOMPARE(h.stats().num_sync_all_streams, syncs + 1);
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(30 * MiB));  // the default's
        QVERIFY(!h.allocator->poolOfAddress(inPool));
        QCOMPARE(h.allocator->poolOfAddress(eager), std::optional<PoolId>(PoolId{}));
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }

    // A default-pool OOM cannot use a private pool's cached memory, and the message says how much
    // is held there (PyTorch: "with X allocated in private pools (e.g., CUDA Graphs)").
    void oomNamesPrivatePoolMemory() {
        Harness h({}, 100 * MiB);
        h.allocator->createPool(kGraphPool);
        h.allocator->beginAllocateToPool(kGraphPool, kCaptureStream, true);
        const std::uint64_t a = h.alloc(40 * MiB, kCaptureStream);
        h.allocator->endAllocateToPool(kGraphPool);
        QVERIFY(h.free(a));
        QCOMPARE(h.alloc(80 * MiB, 0), std::uint64_t{0});
        const QString message = QString::fromStdString(h.allocator->lastOom().message);
        QVERIFY2(message.contains("with 40.00 MiB allocated in private pools (e.g., CUDA Graphs)"), qPrintable(message));
    }

    // An allocation's retry frees what empty_cache() would: c10 malloc's last step is
    // release_cached_blocks(context, {0, 0}) (synchronize_and_free_events, the default pools, then
    // every pool in graph_pools_freeable) and alloc_block(isRetry). So a graph's pool whose graph
    // is gone (use count 0) gives its whole free segments back on a retry, counting one sync and
    // one retry; while the graph lives they stay and the request runs out of memory. (The replay
    // reads a pool release recorded in an allocation's step this way: ReplayRun::releaseRetriedPools.)
    void retryFreesFreeablePools() {
        Harness h({}, 100 * MiB);
        h.allocator->beginAllocateToPool(kGraphPool, kCaptureStream, true);  // capture_begin: one use
        const std::uint64_t a = h.alloc(40 * MiB, kCaptureStream);
        h.allocator->endAllocateToPool(kGraphPool);
        QVERIFY(h.free(a));
        const std::int64_t syncs = h.stats().num_sync_all_streams;
        QCOMPARE(h.alloc(80 * MiB, 0), std::uint64_t{0});  // the graph lives: its 40 MiB stay
        QCOMPARE(h.stats().num_alloc_retries, std::int64_t{1});
        QCOMPARE(h.stats().num_sync_all_streams, syncs + 1);
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(40 * MiB));

        QVERIFY(h.allocator->releasePool(kGraphPool));  // the graph is destroyed
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(40 * MiB));  // nothing yet
        const std::uint64_t b = h.alloc(80 * MiB, 0);
        QVERIFY(b != 0);
        QCOMPARE(h.stats().num_alloc_retries, std::int64_t{2});
        QCOMPARE(h.stats().num_sync_all_streams, syncs + 2);
        QCOMPARE(h.stats().num_device_free, std::int64_t{1});
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(80 * MiB));
        QCOMPARE(h.allocator->poolOfAddress(b), std::optional<PoolId>(PoolId{}));
        QCOMPARE(h.allocator->segments().size(), std::size_t{1});
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }

    // use_on_oom: a MemPool whose free blocks a default-pool request may take before raising.
    void useOnOomLendsThePool() {
        Harness h({}, 100 * MiB);
        PrivatePoolOptions options;
        options.useOnOom = true;
        h.allocator->createPool(kMemPool, options);
        h.allocator->beginAllocateToPool(kMemPool, std::nullopt, false);
        const std::uint64_t a = h.alloc(60 * MiB, 0);
        h.allocator->endAllocateToPool(kMemPool);
        QVERIFY(h.free(a));
        const std::uint64_t b = h.alloc(50 * MiB, 0);  // the device has only 40 MiB left
        QVERIFY(b != 0);
        QCOMPARE(h.allocator->poolOfAddress(b), std::optional<PoolId>(kMemPool));
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }

    // no_split: a pool's block is never split, so a small request takes the whole segment.
    void noSplitKeepsBlocksWhole() {
        Harness h;
        PrivatePoolOptions options;
        options.noSplit = true;
        h.allocator->createPool(kMemPool, options);
        h.allocator->beginAllocateToPool(kMemPool, std::nullopt, false);
        const std::uint64_t a = h.alloc(3 * MiB, 0);
        h.allocator->endAllocateToPool(kMemPool);
        const SegmentInfo s = *segmentAt(*h.allocator, a);
        QCOMPARE(s.totalSize, 20 * MiB);
        QCOMPARE(s.blocks.size(), std::size_t{1});
        // The default pool splits the same request.
        const std::uint64_t b = h.alloc(3 * MiB, 0);
        QCOMPARE(segmentAt(*h.allocator, b)->blocks.size(), std::size_t{2});
        QCOMPARE(QString::fromStdString(h.check()), QString());
    }
};

QTEST_GUILESS_MAIN(TestPrivatePools)
#include "TestPrivatePools.moc"
