// The GPU race's op sequences and its simulated contestant, without a GPU: the sequences must be
// replayable as written (every free and record_stream names a live tensor, two_stream's releases
// come every 64 allocations and frees), and the canonical layout order must ignore where segments lie but nothing else.
#include <QtTest>

#include <iterator>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"
#include "storage/import/TraceImport.h"
#include "tests/gpu/RaceCompare.h"
#include "tests/gpu/RaceOps.h"
#include "tests/gpu/RaceSides.h"
#include "tests/gpu/RaceWaitQueue.h"

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

// A use stream as RaceWaitQueue sees it: marks take positions in enqueue order, and the stream
// runs them in order; every position below `ran` has run.
struct FakeStream {
    std::vector<std::uint64_t> eventAt{0};    // event handle -> position (handle 0 unused)
    std::vector<std::uint64_t> counterAt{0};  // counter number -> position of its write
    std::uint64_t enqueued = 0;
    std::uint64_t ran = 0;
    std::uint64_t queries = 0;

    std::uint32_t reached() const {
        std::uint32_t n = 0;
        while (n + 1 < counterAt.size() && counterAt[n + 1] < ran) ++n;
        return n;
    }
    bool ready(std::uint64_t event) {
        ++queries;
        return eventAt[event] < ran;
    }
};

enum class Marking { Events, Counters, Mixed };

struct WaitRun {
    std::uint64_t frees = 0, writes = 0, queries = 0, polls = 0;
    QString wrong;  // the first poll whose completions differ from the stream's, or ""
};

// Random frees, stream progress and polls on one stream; after every poll, the completed frees
// must be exactly those whose position the stream has run, in order. `window`: the stream
// stands still for that many steps between runs (as the race's held streams do); 0: it moves at
// random every step.
WaitRun runWaitQueue(Marking marking, bool tail, std::size_t window, std::uint32_t seed) {
    std::mt19937 rng(seed);
    FakeStream stream;
    RaceWaitQueue queue;
    WaitRun run;
    std::vector<std::uint64_t> positionOf;  // address -> position of its free
    std::uint64_t completedUpTo = 0;        // addresses below this have completed
    std::uint64_t due = 0;                  // addresses below this the stream has passed
    for (std::size_t step = 0; step < 4000 && run.wrong.isEmpty(); ++step) {
        const bool moves = window == 0 ? rng() % 3 == 0 : step % window == 0;
        if (moves) stream.ran = window == 0 ? stream.ran + rng() % (stream.enqueued - stream.ran + 1) : stream.enqueued;
        if (rng() % 2 == 0) {
            const std::uint64_t address = positionOf.size();
            positionOf.push_back(stream.enqueued);
            const bool counter = marking == Marking::Counters || (marking == Marking::Mixed && queue.counterIdle(stream.reached()));
            if (counter) {
                const std::uint32_t number = queue.pushCounter(address);
                if (number != stream.counterAt.size()) run.wrong = "counter numbers skip";
                stream.counterAt.push_back(stream.enqueued++);
                ++run.writes;
            } else {
                stream.eventAt.push_back(stream.enqueued++);
                queue.pushEvent(stream.eventAt.size() - 1, address);
            }
            ++run.frees;
            if (rng() % 4 == 0) ++stream.enqueued;  // other work on the stream between frees
        } else {
            ++run.polls;
            queue.poll(marking != Marking::Events, stream.reached(), tail, [&](std::uint64_t e) { return stream.ready(e); },
                       [&](const RaceWaitQueue::Waiting& w) {
                           if (w.address != completedUpTo) run.wrong = QString("step %1: free %2 completed out of order").arg(step).arg(w.address);
                           ++completedUpTo;
                       });
            while (due < positionOf.size() && positionOf[due] < stream.ran) ++due;
            if (run.wrong.isEmpty() && due != completedUpTo) {
                run.wrong = QString("step %1: %2 frees completed, the stream has passed %3").arg(step).arg(completedUpTo).arg(due);
            }
        }
    }
    run.queries = stream.queries;
    return run;
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

    // Each two_stream sequence races one completion mechanism; two_stream itself the cheapest one
    // measured (a counter for a stream's oldest waiting free, events for the rest),
    // two_stream_events c10's own (runtime events), names outside the family none.
    void twoStreamSequencesEachNameOneMechanism() {
        using Mode = RaceEventQueue::Mode;
        const char* names[] = {"two_stream",         "two_stream_events", "two_stream_ctr", "two_stream_drv",
                               "two_stream_drvtail", "two_stream_nobar",  "two_stream_w64"};
        std::set<Mode> modes;
        for (const char* name : names) {
            const std::optional<Mode> mode = twoStreamMode(name);
            QVERIFY2(mode.has_value(), name);
            modes.insert(*mode);
            QVERIFY(std::string(describeMode(*mode)) != "?");
        }
        QCOMPARE(modes.size(), std::size(names));
        QCOMPARE(*twoStreamMode("two_stream"), Mode::Mixed);
        QCOMPARE(*twoStreamMode("two_stream_ctr"), Mode::Counters);
        QCOMPARE(*twoStreamMode("two_stream_events"), Mode::Events);
        QVERIFY(!twoStreamMode("anchor"));
        QVERIFY(!twoStreamMode("train_gpt"));
        QVERIFY(!twoStreamMode("two_stream_bogus"));
    }

    // Every way of marking frees completes exactly the frees the stream has passed, at every poll,
    // whether the stream moves at random or stands held between releases.
    void waitQueueCompletesWhatTheStreamPassed() {
        const Marking markings[] = {Marking::Events, Marking::Counters, Marking::Mixed};
        for (Marking marking : markings) {
            for (bool tail : {false, true}) {
                for (std::size_t window : {std::size_t{0}, std::size_t{1}, std::size_t{64}}) {
                    for (std::uint32_t seed = 1; seed <= 20; ++seed) {
                        const WaitRun run = runWaitQueue(marking, tail, window, seed);
                        QVERIFY2(run.wrong.isEmpty(), qPrintable(QString("marking %1 tail %2 window %3 seed %4: %5")
                                                                     .arg(static_cast<int>(marking)).arg(tail).arg(window).arg(seed).arg(run.wrong)));
                        QVERIFY(run.frees > 1000);
                    }
                }
            }
        }
    }

    // Mixed marks a held stream's frees with one counter write per release, and its polls while
    // the stream is held read that counter instead of asking for events: per release at most
    // the two queries of the tail rule, where events alone ask at every poll.
    void mixedMarkingWritesOncePerRelease() {
        const std::size_t window = 64;
        const WaitRun mixed = runWaitQueue(Marking::Mixed, true, window, 7);
        const WaitRun events = runWaitQueue(Marking::Events, true, window, 7);
        const WaitRun counters = runWaitQueue(Marking::Counters, true, window, 7);
        const std::uint64_t releases = 4000 / window + 1;
        QVERIFY2(mixed.writes <= releases, qPrintable(QString("%1 writes for %2 releases").arg(mixed.writes).arg(releases)));
        QCOMPARE(counters.writes, counters.frees);
        QVERIFY2(mixed.queries <= 2 * releases + mixed.writes,
                 qPrintable(QString("%1 queries for %2 releases").arg(mixed.queries).arg(releases)));
        QVERIFY2(events.queries > 10 * mixed.queries, qPrintable(QString("events %1, mixed %2").arg(events.queries).arg(mixed.queries)));
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
