// The GPU race's op sequences and its simulated contestant, without a GPU: the sequences must be
// replayable as written (every free and record_stream names a live tensor, two_stream's releases
// come every 64 allocations and frees), and the canonical layout order must ignore where segments lie but nothing else.
#include <QtTest>

#include <iterator>
#include <optional>
#include <set>
#include <string>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"
#include "storage/import/TraceImport.h"
#include "tests/gpu/RaceCompare.h"
#include "tests/gpu/RaceOps.h"
#include "tests/gpu/RaceSides.h"

using namespace allocscope::alloc;
using namespace allocscope::gpu;

namespace {

// Walks a sequence; returns "" when every op is legal, else what is wrong and where.
QString checkSequence(const RaceOps& race) {
    std::vector<int> state(race.idCount, 0);  // 0 never allocated, 1 live, 2 freed
    std::vector<std::uint8_t> allocStream(race.idCount, 0);
    for (std::size_t i = 0; i < race.ops.size(); ++i) {
        const RaceOp& op = race.ops[i];
        if (op.kind != RaceKind::Release && op.id >= race.idCount) return QString("op %1: id out of range").arg(i);
        switch (op.kind) {
        case RaceKind::Alloc:
            if (state[op.id] != 0 || op.size == 0) return QString("op %1: alloc of a used id or of 0 bytes").arg(i);
            state[op.id] = 1;
            allocStream[op.id] = op.stream;
            break;
        case RaceKind::Free:
            if (state[op.id] != 1) return QString("op %1: free of a tensor that is not live").arg(i);
            state[op.id] = 2;
            break;
        case RaceKind::RecordStream:
            if (state[op.id] != 1) return QString("op %1: record_stream of a tensor that is not live").arg(i);
            if (op.stream == allocStream[op.id] || op.stream == 0) return QString("op %1: record_stream on its own stream").arg(i);
            break;
        case RaceKind::Release: break;
        }
    }
    return {};
}

SegmentInfo segment(std::uint64_t address, std::uint64_t size, std::vector<std::uint64_t> blocks) {
    SegmentInfo s;
    s.address = address;
    s.totalSize = size;
    for (std::uint64_t b : blocks) {
        BlockInfo info;
        info.size = b;
        s.blocks.push_back(info);
    }
    return s;
}

}  // namespace

class TestRaceOps : public QObject {
    Q_OBJECT
private slots:
    void anchorIsTheBenchmarkSequence() {
        const RaceOps race = makeRaceOps(5000);
        QCOMPARE(race.ops.size(), std::size_t{5000});
        QCOMPARE(race.timedOps(race.ops.size()), std::size_t{5000});
        QCOMPARE(checkSequence(race), QString());
        QVERIFY(!race.streams);
    }

    void trainGptRepeatsTheTraceAndLeavesNothingLive() {
        const auto traces = allocscope::storage::importTraceFile(std::string(ALLOCSCOPE_TEST_DATA) + "/traces/train_gpt__default.pickle");
        QVERIFY(!traces.empty());
        std::size_t allocs = 0;
        for (const RecordedEntry& e : traces.front().entries) allocs += e.action == EventAction::Alloc ? 1 : 0;
        const RaceOps race = raceOpsFromTrace(traces.front(), 20000, "train_gpt");
        QVERIFY(race.ops.size() >= 20000);
        QCOMPARE(checkSequence(race), QString());
        // Whole repetitions: each allocation of the trace once per repetition, all freed again.
        QCOMPARE(race.idCount % allocs, std::size_t{0});
        QVERIFY(race.idCount / allocs >= 2);
        QVERIFY(race.liveAfter(race.ops.size()).empty());
    }

    void twoStreamUsesTheOtherStreamAndReleasesEvery64Steps() {
        const RaceOps race = makeTwoStreamOps(20000);
        QVERIFY(race.streams);
        QCOMPARE(checkSequence(race), QString());
        std::size_t records = 0;
        std::size_t allocs = 0;
        std::size_t sinceRelease = 0;  // allocations and frees since the last release
        std::size_t releases = 0;
        std::set<std::uint8_t> streams;
        for (const RaceOp& op : race.ops) {
            if (op.kind == RaceKind::Alloc || op.kind == RaceKind::Free) ++sinceRelease;
            if (op.kind == RaceKind::Release) {
                QCOMPARE(sinceRelease, std::size_t{releases == 0 ? 63u : 64u});
                sinceRelease = 0;
                ++releases;
            }
            if (op.kind == RaceKind::Alloc) {
                ++allocs;
                streams.insert(op.stream);
            }
            records += op.kind == RaceKind::RecordStream ? 1 : 0;
        }
        QCOMPARE(streams, (std::set<std::uint8_t>{1, 2}));
        QVERIFY(records > allocs / 5 && records < allocs * 2 / 5);  // ~30%
        // Seeded: the same sequence every time.
        const RaceOps again = makeTwoStreamOps(20000);
        QCOMPARE(again.ops.size(), race.ops.size());
        QVERIFY(std::equal(race.ops.begin(), race.ops.end(), again.ops.begin(), [](const RaceOp& a, const RaceOp& b) {
            return a.size == b.size && a.id == b.id && a.kind == b.kind && a.stream == b.stream;
        }));
    }

    // The simulated contestant: frees used on another stream stay pending until the next release,
    // then complete at the following malloc, and a pass ends with every block free again.
    void simulatedSideKeepsFreesPendingUntilRelease() {
        SimulatedDevice device(80ull << 30, 0);
        CachingAllocator allocator(AllocatorConfig{}, device);
        SimulatedEvents events;
        const std::uint64_t handles[3] = {0, 0x100, 0x200};
        AllocScopeSide<SimulatedEvents> side(allocator, events, nullptr, handles);
        const std::uint64_t a = side.alloc(4096, 1);
        side.recordStream(a, 2);
        side.free(a, 2);
        QVERIFY(allocator.isPendingFree(a));
        side.alloc(4096, 1);  // not released yet: still pending
        QVERIFY(allocator.isPendingFree(a));
        side.release();
        const std::uint64_t c = side.alloc(4096, 1);  // completes the pending free first
        QVERIFY(!allocator.isPendingFree(a));
        QCOMPARE(c, a);  // and the freed block is the best fit again
        QVERIFY(!side.failed);

        const RaceOps race = makeTwoStreamOps(4000);
        std::vector<std::uint64_t> pointers(race.idCount, 0);
        std::vector<std::uint8_t> uses(race.idCount, 0);
        SimulatedDevice device2(80ull << 30, 0);
        CachingAllocator fresh(AllocatorConfig{}, device2);
        SimulatedEvents events2;
        AllocScopeSide<SimulatedEvents> side2(fresh, events2, nullptr, handles);
        const double ns = racePass(race, race.ops.size(), race.liveAfter(race.ops.size()), pointers, uses, side2, [] {});
        QVERIFY(ns > 0);
        QVERIFY(!side2.failed);
        QCOMPARE(fresh.stats().allocation[kAggregate].current, std::int64_t{0});
    }

    // Each two_stream sequence races one marking of StreamFreeQueue; two_stream itself the
    // product's default (a counter for a stream's oldest waiting free, driver events for the
    // rest), two_stream_events c10's own (runtime events), names outside the family none.
    void twoStreamSequencesEachNameOneMarking() {
        using Marking = StreamFreeQueue::Marking;
        const char* names[] = {"two_stream", "two_stream_events", "two_stream_ctr", "two_stream_drv", "two_stream_drvtail"};
        std::set<Marking> markings;
        for (const char* name : names) {
            const std::optional<Marking> marking = twoStreamMarking(name);
            QVERIFY2(marking.has_value(), name);
            markings.insert(*marking);
        }
        QCOMPARE(markings.size(), std::size(names));
        QCOMPARE(*twoStreamMarking("two_stream"), Marking::Mixed);
        QCOMPARE(*twoStreamMarking("two_stream_ctr"), Marking::Counters);
        QCOMPARE(*twoStreamMarking("two_stream_events"), Marking::Events);
        QVERIFY(!twoStreamMarking("anchor"));
        QVERIFY(!twoStreamMarking("train_gpt"));
        QVERIFY(!twoStreamMarking("two_stream_bogus"));
        QVERIFY(!twoStreamMarking("two_stream_nobar"));  // unsafe (no memory barrier): not offered
    }

    void canonicalOrderIgnoresAddressesOnly() {
        const std::vector<SegmentInfo> ours = {segment(0x1000, 2 << 20, {512, (2 << 20) - 512}), segment(0x9000, 20 << 20, {20 << 20})};
        const std::vector<SegmentInfo> theirs = {segment(0x5000, 20 << 20, {20 << 20}), segment(0x7000, 2 << 20, {512, (2 << 20) - 512})};
        QVERIFY(compareLayouts(ours, theirs).rfind("DIFF", 0) == 0);  // address order differs
        QVERIFY(compareLayouts(canonicalOrder(ours), canonicalOrder(theirs)).rfind("MATCH", 0) == 0);
        std::vector<SegmentInfo> split = theirs;
        split[1] = segment(0x7000, 2 << 20, {1024, (2 << 20) - 1024});  // a different decision
        QVERIFY(compareLayouts(canonicalOrder(ours), canonicalOrder(split)).rfind("DIFF", 0) == 0);
    }
};

QTEST_GUILESS_MAIN(TestRaceOps)
#include "TestRaceOps.moc"
