// Multi-step scenarios with hand-computed layouts and statistics: the §3.6 layout, the §8.2
// sequence, expandable mapping (§6), pending frees (§5), empty_cache (§7), resets (§8.3) and the
// one-net-update rule of §18.1.
#include <QtTest>

#include "allocator/core/MemorySummary.h"
#include "tests/allocator/AllocatorHarness.h"

using namespace allocscope::alloc;
using namespace allocscope::alloc::testing;

namespace {
struct B {
    std::uint64_t size;
    std::uint64_t requested;
    BlockState state;
};
void expectBlocks(const SegmentInfo& segment, const std::vector<B>& expected) {
    QCOMPARE(segment.blocks.size(), expected.size());
    std::uint64_t address = segment.address;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        QCOMPARE(segment.blocks[i].address, address);
        QCOMPARE(segment.blocks[i].size, expected[i].size);
        QCOMPARE(segment.blocks[i].requestedSize, expected[i].requested);
        QCOMPARE(segment.blocks[i].state, expected[i].state);
        address += expected[i].size;
    }
}
constexpr BlockState kAlloc = BlockState::ActiveAllocated;
constexpr BlockState kFree = BlockState::Inactive;
constexpr BlockState kPending = BlockState::ActivePendingFree;
}  // namespace

class TestAllocatorScenarios : public QObject {
    Q_OBJECT
private slots:
    void layoutExample() {  // §3.6
        Harness h;
        const std::uint64_t a = h.alloc(1);
        h.alloc(MiB);
        const std::uint64_t c = h.alloc(MiB + 1);
        h.alloc(12 * MiB + 1);
        h.alloc(10 * MiB - KiB);
        h.alloc(700);
        const auto segments = h.allocator->segments();
        QCOMPARE(segments.size(), std::size_t(3));
        QCOMPARE(segments[0].pool, PoolKind::Small);
        QCOMPARE(segments[0].address, a);
        expectBlocks(segments[0], {{512, 1, kAlloc}, {1048576, 1048576, kAlloc}, {1024, 700, kAlloc}, {1047040, 0, kFree}});
        QCOMPARE(segments[1].address, c);
        QCOMPARE(segments[1].totalSize, 20 * MiB);
        expectBlocks(segments[1], {{1049088, 1048577, kAlloc}, {12583424, 12582913, kAlloc}, {7339008, 0, kFree}});
        expectBlocks(segments[2], {{10484736, 10484736, kAlloc}, {10486784, 0, kFree}});
        QCOMPARE(h.stats().inactive_split[kAggregate].current, std::int64_t(3));
        QVERIFY(h.free(c));
        QCOMPARE(h.stats().inactive_split[kAggregate].current, std::int64_t(4));
        const auto after = h.allocator->segments();
        QCOMPARE(after[1].blocks[0].state, kFree);
        QCOMPARE(after[1].blocks[0].requestedSize, 1048577ull);  // stale requested size
        h.allocator->emptyCache();  // every segment holds a live tensor: nothing released
        QCOMPARE(h.stats().num_device_free, std::int64_t(0));
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(1));
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(42 * MiB));
        QCOMPARE(h.check(), std::string());
    }

    void statsSequence() {  // §8.2
        Harness h;
        const DeviceStats& s = h.stats();
        h.alloc(1);
        QCOMPARE(s.allocation[kAggregate].current, std::int64_t(1));
        QCOMPARE(s.allocated_bytes[kAggregate].current, std::int64_t(512));
        QCOMPARE(s.requested_bytes[kAggregate].current, std::int64_t(1));
        QCOMPARE(s.reserved_bytes[kSmallPool].current, std::int64_t(2 * MiB));
        QCOMPARE(s.segment[kAggregate].current, std::int64_t(1));
        QCOMPARE(s.inactive_split[kAggregate].current, std::int64_t(1));
        QCOMPARE(s.inactive_split_bytes[kAggregate].current, std::int64_t(2096640));
        h.alloc(MiB);
        QCOMPARE(s.allocated_bytes[kAggregate].current, std::int64_t(1049088));
        QCOMPARE(s.inactive_split_bytes[kAggregate].current, std::int64_t(1048064));
        h.alloc(MiB + 1);
        QCOMPARE(s.reserved_bytes[kLargePool].current, std::int64_t(20 * MiB));
        QCOMPARE(s.allocated_bytes[kAggregate].current, std::int64_t(2 * 1049088));
        QCOMPARE(s.inactive_split[kAggregate].current, std::int64_t(2));
        QCOMPARE(s.inactive_split_bytes[kAggregate].current, std::int64_t(20970496));
        h.alloc(12 * MiB + 1);
        QCOMPARE(s.segment[kAggregate].current, std::int64_t(2));
        QCOMPARE(s.inactive_split_bytes[kLargePool].current, std::int64_t(7339008));
        h.alloc(10 * MiB - KiB);
        QCOMPARE(s.segment[kAggregate].current, std::int64_t(3));
        QCOMPARE(s.num_device_alloc, std::int64_t(3));
        QCOMPARE(h.check(), std::string());
    }

    void inactiveSplitIsOneNetUpdate() {  // §18.1
        Harness h;
        const std::uint64_t a = h.alloc(4 * MiB);
        const std::uint64_t b = h.alloc(4 * MiB);
        const std::uint64_t c = h.alloc(4 * MiB);
        QVERIFY(h.free(a));  // no free neighbour: +1 / +4 MiB
        QVERIFY(h.free(c));  // absorbs the 8 MiB tail: count net 0 (no update), bytes +4 MiB
        QVERIFY(h.free(b));  // absorbs both: -2 / -16 MiB, the segment is whole again
        const Stat& count = h.stats().inactive_split[kAggregate];
        const Stat& bytes = h.stats().inactive_split_bytes[kAggregate];
        QCOMPARE(count.current, std::int64_t(0));
        QCOMPARE(count.peak, std::int64_t(2));
        QCOMPARE(count.allocated, std::int64_t(2));  // per-neighbour updates would give 3
        QCOMPARE(count.freed, std::int64_t(2));
        QCOMPARE(bytes.current, std::int64_t(0));
        QCOMPARE(bytes.peak, std::int64_t(16 * MiB));
        QCOMPARE(bytes.allocated, std::int64_t(24 * MiB));
        QCOMPARE(bytes.freed, std::int64_t(24 * MiB));
        QCOMPARE(h.check(), std::string());
    }

    void summarySampleFromReference() {  // §9 sample: 3 MiB and 5 MiB in one 20 MiB segment
        Harness h;
        h.alloc(3 * MiB);
        h.alloc(5 * MiB);
        const std::string summary = h.allocator->memorySummary();
        QVERIFY(summary.find("| Allocated memory      |   8192 KiB |   8192 KiB |   8192 KiB |      0 B   |\n") !=
                std::string::npos);
        QVERIFY(summary.find("| Non-releasable memory |  12288 KiB |  17408 KiB |  17408 KiB |   5120 KiB |\n") !=
                std::string::npos);
        QVERIFY(summary.find("| GPU reserved memory   |  20480 KiB |  20480 KiB |  20480 KiB |      0 B   |\n") !=
                std::string::npos);
        QVERIFY(summary.find("|       from small pool |      0 KiB |      0 KiB |      0 KiB |      0 B   |\n") !=
                std::string::npos);
    }

    void bestFitTiesGoToLowestAddress() {
        Harness h;
        std::vector<std::uint64_t> blocks;
        for (int i = 0; i < 4; ++i) blocks.push_back(h.alloc(4 * MiB));  // one 20 MiB segment
        h.alloc(4 * MiB);  // fills it
        QVERIFY(h.free(blocks[3]));
        QVERIFY(h.free(blocks[1]));
        QCOMPARE(h.alloc(4 * MiB), blocks[1]);  // two equal 4 MiB holes: the lower one
        QCOMPARE(h.alloc(3 * MiB), blocks[3]);  // whole (tail 1 MiB is not > 1 MiB)
        QCOMPARE(h.stats().allocated_bytes[kAggregate].current, std::int64_t(20 * MiB));
    }

    void noCrossStreamReuse() {
        Harness h;
        const std::uint64_t a = h.alloc(4 * MiB, 1);
        QVERIFY(h.free(a));
        const std::uint64_t b = h.alloc(4 * MiB, 2);
        QVERIFY(b != a);
        QCOMPARE(h.stats().segment[kAggregate].current, std::int64_t(2));
        QCOMPARE(h.alloc(4 * MiB, 1), a);
    }

    void expandableMapping() {  // §6.2 and the observed sequence of §11.2
        Harness h(expandableConfig());
        const std::uint64_t big = h.alloc(100 * MiB);
        h.alloc(1);
        h.alloc(30 * MiB);
        const auto maps = h.eventsOf(EventAction::SegmentMap);
        QCOMPARE(maps.size(), std::size_t(3));
        QCOMPARE(maps[0].size, 100 * MiB);  // 5 pages of 20 MiB
        QCOMPARE(maps[0].address, big);
        QCOMPARE(maps[1].size, 2 * MiB);    // 1 byte, small pool page
        QCOMPARE(maps[1].pool, PoolKind::Small);
        QCOMPARE(maps[2].size, 40 * MiB);   // 30 MiB -> 2 pages
        QCOMPARE(maps[2].address, big + 100 * MiB);
        QCOMPARE(h.stats().num_device_alloc, std::int64_t(3));
        QCOMPARE(h.stats().segment[kAggregate].current, std::int64_t(0));
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(142 * MiB));
        // Free the 100 MiB tensor; empty_cache unmaps its 5 pages, not the 10 MiB tail of page 7.
        QVERIFY(h.free(big));
        QCOMPARE(h.stats().inactive_split[kAggregate].current, std::int64_t(0));
        h.allocator->emptyCache();
        const auto unmaps = h.eventsOf(EventAction::SegmentUnmap);
        QCOMPARE(unmaps.size(), std::size_t(1));
        QCOMPARE(unmaps[0].size, 100 * MiB);
        QCOMPARE(unmaps[0].address, big);
        QCOMPARE(unmaps[0].cause, EventCause::EmptyCache);
        QCOMPARE(h.stats().reserved_bytes[kLargePool].current, std::int64_t(40 * MiB));
        QCOMPARE(h.stats().reserved_bytes[kSmallPool].current, std::int64_t(2 * MiB));
        QCOMPARE(h.stats().num_device_free, std::int64_t(1));
        // The snapshot's large segment moved up by 100 MiB.
        const auto segments = h.allocator->segments();
        QCOMPARE(segments.size(), std::size_t(2));
        std::uint64_t largeAddress = 0;
        for (const SegmentInfo& s : segments) {
            QVERIFY(s.isExpandable);
            if (s.pool == PoolKind::Large) {
                largeAddress = s.address;
                QCOMPARE(s.totalSize, 40 * MiB);
                expectBlocks(s, {{30 * MiB, 30 * MiB, kAlloc}, {10 * MiB, 0, kFree}});
            }
        }
        QCOMPARE(largeAddress, big + 100 * MiB);
        QCOMPARE(h.check(), std::string());
    }
    void expandableReservationSizeAndRelease() {
        Harness h(expandableConfig(), 8 * GiB);
        const std::uint64_t a = h.alloc(30 * MiB);
        const auto& ranges = h.device.liveRanges();
        QCOMPARE(ranges.size(), std::size_t(1));
        // ceil(9 GiB / 20 MiB) = 461 pages.
        QCOMPARE(ranges.begin()->second, 461 * 20 * MiB);
        QVERIFY(h.free(a));
        h.allocator->emptyCache();
        QCOMPARE(h.device.liveRanges().size(), std::size_t(0));  // fully unmapped: released
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(0));
        QCOMPARE(h.device.usedBytes(), std::uint64_t(0));
        // The next reservation lands at the same base (§18.1).
        QCOMPARE(h.alloc(30 * MiB), a);
        QCOMPARE(h.check(), std::string());
    }
    void expandableGrowsInPlaceAndWalk() {
        Harness h(expandableConfig());
        const std::uint64_t a = h.alloc(10 * MiB);  // maps page 0; 10 MiB tail free
        const std::uint64_t b = h.alloc(15 * MiB);  // tail (10) + maps page 1
        QCOMPARE(b, a + 10 * MiB);
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(40 * MiB));
        QCOMPARE(h.eventsOf(EventAction::SegmentMap).size(), std::size_t(2));
        QCOMPARE(h.eventsOf(EventAction::SegmentMap)[1].size, 20 * MiB);
        QCOMPARE(h.check(), std::string());
    }

    void expandableBestFitWalk() {  // §3.1 step 3
        Harness h(expandableConfig());
        const std::uint64_t a = h.alloc(12 * MiB);  // page 0: [a 12][free 8]
        const std::uint64_t b = h.alloc(8 * MiB);   // fills page 0
        const std::uint64_t c = h.alloc(10 * MiB);  // page 1: [c 10][free 10][unmapped ...]
        QCOMPARE(b, a + 12 * MiB);
        QCOMPARE(c, a + 20 * MiB);
        QVERIFY(h.free(a));
        // Free set: 10 MiB (followed by the unmapped rest: it could grow) and 12 MiB (boxed in).
        // Plain best fit would carve the 10 MiB tail; the walk prefers the block whose
        // expandable size is smaller: the 12 MiB one.
        QCOMPARE(h.alloc(8 * MiB), a);
        QCOMPARE(h.check(), std::string());
    }
    void expandableReservationPerStreamAndPool() {  // §6.1
        Harness h(expandableConfig(), 8 * GiB);
        h.alloc(30 * MiB, 1);
        h.alloc(30 * MiB, 2);
        h.alloc(1, 1);
        QCOMPARE(h.device.liveRanges().size(), std::size_t(3));
        QCOMPARE(h.check(), std::string());
    }

    void recordStreamPendingFree() {  // §5
        Harness h;
        const std::uint64_t five = h.alloc(5 * MiB);
        h.alloc(3 * MiB);
        QVERIFY(h.allocator->recordStream(five, 7));
        QVERIFY(h.allocator->recordStream(five, 0));  // own stream: ignored
        const std::size_t mark = h.mark();
        QVERIFY(h.free(five));
        QCOMPARE(h.since(mark).size(), std::size_t(1));  // free_requested only
        QCOMPARE(h.stats().allocated_bytes[kAggregate].current, std::int64_t(3 * MiB));
        QCOMPARE(h.stats().active_bytes[kAggregate].current, std::int64_t(8 * MiB));
        QVERIFY(h.allocator->isPendingFree(five));
        QCOMPARE(h.allocator->segments()[0].blocks[0].state, kPending);
        QVERIFY(!h.free(five));                          // already freed
        QVERIFY(!h.allocator->recordStream(five, 3));    // not a live tensor any more
        QVERIFY(h.alloc(5 * MiB) != five);               // not reusable while pending
        QCOMPARE(h.check(), std::string());
        QVERIFY(h.allocator->completePendingFree(five));
        QCOMPARE(h.since(mark).back().action, EventAction::FreeCompleted);
        QVERIFY(!h.allocator->isPendingFree(five));
        QVERIFY(!h.allocator->completePendingFree(five));
        QCOMPARE(h.stats().active_bytes[kAggregate].current, std::int64_t(8 * MiB));
        QCOMPARE(h.check(), std::string());
    }
    void synchronizeAndEmptyCacheCompletePending() {
        Harness h;
        const std::uint64_t a = h.alloc(5 * MiB);
        const std::uint64_t b = h.alloc(600);
        QVERIFY(h.allocator->recordStream(a, 2));
        QVERIFY(h.allocator->recordStream(b, 3));
        QVERIFY(h.free(a) && h.free(b));
        h.allocator->synchronize();
        QVERIFY(!h.allocator->isPendingFree(a));
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(0));
        QCOMPARE(h.stats().active[kAggregate].current, std::int64_t(0));
        const std::uint64_t c = h.alloc(5 * MiB);
        QVERIFY(h.allocator->recordStream(c, 2));
        QVERIFY(h.free(c));
        h.allocator->emptyCache();  // synchronize_and_free_events, then release
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(1));
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(0));
        const auto completed = h.eventsOf(EventAction::FreeCompleted);
        QCOMPARE(completed.back().address, c);  // c reuses a's address; its completion is the last
        QCOMPARE(completed.back().cause, EventCause::EmptyCache);
        QCOMPARE(h.check(), std::string());
    }
    void pendingBlockDoesNotMerge() {
        Harness h;
        const std::uint64_t a = h.alloc(4 * MiB);
        const std::uint64_t b = h.alloc(4 * MiB);
        QVERIFY(h.allocator->recordStream(a, 9));
        QVERIFY(h.free(a));
        QVERIFY(h.free(b));  // b merges with the tail, not with pending a
        auto blocks = h.allocator->segments()[0].blocks;
        QCOMPARE(blocks.size(), std::size_t(2));
        QCOMPARE(blocks[1].size, 16 * MiB);
        QVERIFY(h.allocator->completePendingFree(a));
        QCOMPARE(h.allocator->segments()[0].blocks.size(), std::size_t(1));
        QCOMPARE(h.stats().inactive_split[kAggregate].current, std::int64_t(0));
        QCOMPARE(h.check(), std::string());
    }

    void emptyCacheReleasesWholeFreeSegments() {  // §7
        Harness h;
        std::vector<std::uint64_t> live = {h.alloc(1), h.alloc(MiB + 1), h.alloc(12 * MiB + 1), h.alloc(30 * MiB)};
        for (std::uint64_t address : live) QVERIFY(h.free(address));
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(52 * MiB));
        h.allocator->emptyCache();
        QCOMPARE(h.stats().reserved_bytes[kAggregate].current, std::int64_t(0));
        QCOMPARE(h.stats().num_device_free, std::int64_t(3));
        const auto frees = h.eventsOf(EventAction::SegmentFree);
        QCOMPARE(frees.size(), std::size_t(3));
        QCOMPARE(frees[2].pool, PoolKind::Small);  // large pool first, then small
        for (const Event& e : frees) QCOMPARE(e.cause, EventCause::EmptyCache);
        QCOMPARE(h.check(), std::string());
    }

    void resets() {  // §8.3
        Harness h(maxSplitConfig(128));
        const std::uint64_t a = h.alloc(200 * MiB);
        h.alloc(MiB);
        QVERIFY(h.free(a));
        h.allocator->emptyCache();
        h.allocator->resetPeakStats();
        h.checker.noteResetPeak();
        QCOMPARE(h.stats().allocated_bytes[kAggregate].peak, std::int64_t(MiB));
        QCOMPARE(h.stats().oversize_segments.peak, std::int64_t(0));
        QCOMPARE(h.check(), std::string());
        h.allocator->resetAccumulatedStats();
        h.checker.noteResetAccumulated(*h.allocator);
        QCOMPARE(h.stats().allocated_bytes[kAggregate].allocated, std::int64_t(0));
        QCOMPARE(h.stats().allocated_bytes[kAggregate].current, std::int64_t(MiB));
        QCOMPARE(h.stats().num_device_alloc, std::int64_t(0));
        QCOMPARE(h.stats().num_device_free, std::int64_t(0));
        QCOMPARE(h.stats().num_sync_all_streams, std::int64_t(0));
        QCOMPARE(h.stats().max_split_size, std::int64_t(128 * MiB));
        h.alloc(3 * MiB);
        QCOMPARE(h.check(), std::string());
    }

    void fractionFromConfig() {
        AllocatorConfig config;
        config.perProcessMemoryFraction = 0.5;
        Harness h(config, 4 * GiB);
        QVERIFY(h.alloc(2 * GiB) != 0);
        QCOMPARE(h.alloc(2 * MiB), std::uint64_t(0));
        QVERIFY(h.allocator->lastOom().message.find("2.00 GiB allowed; ") != std::string::npos);
    }

    void snapshotEmitsEvent() {
        Harness h;
        h.alloc(3 * MiB);
        const auto segments = h.allocator->snapshot();
        const auto snaps = h.eventsOf(EventAction::Snapshot);
        QCOMPARE(snaps.size(), std::size_t(1));
        QCOMPARE(snaps[0].size, 3 * MiB);
        QCOMPARE(segments[0].activeSize, 3 * MiB);
        QCOMPARE(segments[0].requestedSize, 3 * MiB);
    }

    void eventFields() {
        Harness h;
        h.allocator->setOpIndex(42);
        const std::uint64_t a = h.alloc(700, 5);
        const auto& events = h.events.events;
        QCOMPARE(events.size(), std::size_t(2));
        QCOMPARE(events[0].action, EventAction::SegmentAlloc);
        QCOMPARE(events[0].seq, 0ull);
        QCOMPARE(events[1].seq, 1ull);
        QCOMPARE(events[1].opIndex, 42ull);
        QCOMPARE(events[1].address, a);
        QCOMPARE(events[1].size, 700ull);
        QCOMPARE(events[1].roundedSize, 1024ull);
        QCOMPARE(events[1].segment, events[0].address);
        QCOMPARE(events[1].stream, StreamId(5));
        QCOMPARE(events[1].pool, PoolKind::Small);
    }

    void debugDumpNamesBlocks() {
        Harness h;
        h.alloc(3 * MiB);
        const std::string dump = h.allocator->debugDump();
        QVERIFY(dump.find("allocated") != std::string::npos);
        QVERIFY(dump.find("size=20971520") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestAllocatorScenarios)
#include "TestAllocatorScenarios.moc"
