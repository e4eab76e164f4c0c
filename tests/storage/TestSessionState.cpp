// State at an event, rebuilt from a session file (nearest keyframe + events + stats fixups),
// must equal what the real CachingAllocator reported at that point: segments() and stats().
#include <QtTest>

#include <random>

#include "StorageTestSupport.h"
#include "storage/session/HeatmapRaster.h"
#include "storage/session/SegmentStateModel.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"

using namespace allocscope;
using namespace storagetest;

class TestSessionState : public QObject {
    Q_OBJECT

private:
    // Records `program` under `config` and checks `samples` random event indexes.
    void checkConfig(const std::string& config, std::size_t ops, std::size_t samples, std::uint64_t seed) {
        QTemporaryDir dir;
        const std::string path = dir.filePath("state.allocscope").toStdString();
        const alloc::Program program = randomProgram(seed, ops);

        // Pass 1: where the op boundaries are (the state "at event N" is the allocator's state
        // after the last op whose events end at N, event-less ops included).
        std::vector<std::uint64_t> boundaries;
        recordProgram(nullptr, program, config, {}, [&](std::uint64_t count, alloc::CachingAllocator&) {
            if (count > 0 && (boundaries.empty() || boundaries.back() != count - 1)) boundaries.push_back(count - 1);
        });
        QVERIFY(boundaries.size() > samples);
        std::mt19937_64 rng(seed);
        std::map<std::uint64_t, Truth> truth;
        while (truth.size() < samples) truth[boundaries[rng() % boundaries.size()]] = {};
        truth[boundaries.back()] = {};

        // Pass 2: record, and keep the allocator's own state at the chosen events.
        storage::RecorderOptions options;
        options.batchEvents = 512;
        options.keyframeInterval = 2048;
        RecordedRun run;
        {
            storage::SessionWriter writer(path);
            run = recordProgram(&writer, program, config, options, [&](std::uint64_t count, alloc::CachingAllocator& a) {
                if (count == 0) return;
                auto it = truth.find(count - 1);
                if (it != truth.end()) it->second = Truth{a.segments(), a.stats()};
            });
        }
        QVERIFY(run.events.size() > 10000);
        std::size_t ooms = 0, maps = 0, retries = 0;
        for (const auto& e : run.events) {
            ooms += e.action == alloc::EventAction::Oom;
            maps += e.action == alloc::EventAction::SegmentMap;
            retries += e.cause == alloc::EventCause::OomRetry;
        }
        qInfo("%s: %zu events, %zu OOMs, %zu maps, %zu oom-retry releases, %zu samples", config.c_str(), run.events.size(), ooms,
              maps, retries, truth.size());

        storage::SessionReader reader(path);
        storage::StateCursor cursor(reader, run.runNumber);
        QCOMPARE(cursor.eventCount(), run.events.size());
        for (const auto& [seq, want] : truth) {
            const storage::StateAtEvent got = cursor.load(seq);
            QCOMPARE(got.seq, seq);
            QCOMPARE(got.event.action, run.events[seq].action);
            QCOMPARE(got.event.address, run.events[seq].address);
            const std::string layout = layoutDifference(want.segments, got.segments);
            QVERIFY2(layout.empty(), (config + " at event " + std::to_string(seq) + ": " + layout).c_str());
            const std::string stats = statsDifference(want.stats, got.stats);
            QVERIFY2(stats.empty(), (config + " at event " + std::to_string(seq) + ": " + stats).c_str());
        }
        // The final state is the allocator's final state.
        const auto last = cursor.load(run.events.size() - 1);
        QVERIFY(layoutDifference(run.finalSegments, last.segments).empty());
        QVERIFY(statsDifference(run.finalStats, last.stats).empty());

        // Stepping: +1 then -1 lands on the same state as loading; -1 past the journal depth
        // reloads. Compare against fresh loads at random places.
        storage::StateCursor fresh(reader, run.runNumber);
        for (int i = 0; i < 40; ++i) {
            const std::uint64_t seq = 400 + rng() % (run.events.size() - 800);
            cursor.load(seq);
            for (int k = 0; k < 3; ++k) cursor.step(+1);
            for (int k = 0; k < 300; ++k) cursor.step(-1);  // past the journal: one reload
            const auto stepped = cursor.step(+1);
            const auto loaded = fresh.load(seq - 300 + 3 + 1);
            QCOMPARE(stepped.seq, loaded.seq);
            QVERIFY(layoutDifference(loaded.segments, stepped.segments).empty());
            QVERIFY(statsDifference(loaded.stats, stepped.stats).empty());
        }
    }

    // A small-pool event for SegmentStateModel (segment events: size == roundedSize).
    static alloc::Event modelEvent(std::uint64_t seq, alloc::EventAction action, std::uint64_t address, std::uint64_t size) {
        alloc::Event e;
        e.seq = seq;
        e.action = action;
        e.address = address;
        e.size = size;
        e.roundedSize = size;
        e.segment = 0x7f0000000000;
        e.pool = alloc::PoolKind::Small;
        return e;
    }

private slots:
    void stateMatchesAllocatorDefaultConfig() { checkConfig("default", 30000, 1000, 11); }
    void stateMatchesAllocatorMaxSplitAndGc() { checkConfig("split", 20000, 300, 12); }
    void stateMatchesAllocatorExpandable() { checkConfig("expandable", 20000, 300, 13); }

    // The model finds blocks by address through a table of recently put ones
    // (SegmentStateModel::find). A block that a merge erased must not be found there again: an
    // event that names its address is refused like any event that does not fit the layout.
    void blockMergedAwayIsNotFoundAgain() {
        storage::SegmentStateModel model;
        std::uint64_t seq = 0;
        const std::uint64_t seg = 0x7f0000000000;
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::SegmentAlloc, seg, 2 * alloc::kMiB)));
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::Alloc, seg, 512)));
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::Alloc, seg + 512, 512)));
        QVERIFY(model.blocks().count(seg + 1024) == 1);  // the free remainder
        // Freeing the second block merges the remainder into it: the node at seg + 1024 goes.
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::FreeRequested, seg + 512, 512)));
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::FreeCompleted, seg + 512, 512)));
        QCOMPARE(model.blocks().count(seg + 1024), std::size_t{0});
        QCOMPARE(model.blocks().at(seg + 512).size, 2 * alloc::kMiB - 512);
        const std::uint64_t anomalies = model.anomalies();
        QVERIFY(!model.apply(modelEvent(seq++, alloc::EventAction::FreeRequested, seg + 1024, 512)));
        QVERIFY(!model.apply(modelEvent(seq++, alloc::EventAction::FreeCompleted, seg + 1024, 512)));
        QCOMPARE(model.anomalies(), anomalies + 2);
        QCOMPARE(model.liveBlocks(), std::size_t{1});
        // The address can hold a block again once one is carved there.
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::Alloc, seg + 512, 512)));
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::Alloc, seg + 1024, 1024)));
        QCOMPARE(model.blocks().at(seg + 1024).state, alloc::BlockState::ActiveAllocated);
        QCOMPARE(model.liveBlocks(), std::size_t{3});
    }

    // A copy of a model (a cursor's, a heatmap query's) changes only itself.
    void copiedModelChangesOnlyItself() {
        storage::SegmentStateModel model;
        std::uint64_t seq = 0;
        const std::uint64_t seg = 0x7f0000000000;
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::SegmentAlloc, seg, 2 * alloc::kMiB)));
        QVERIFY(model.apply(modelEvent(seq++, alloc::EventAction::Alloc, seg, 512)));
        storage::SegmentStateModel copy = model;
        QVERIFY(copy.apply(modelEvent(seq, alloc::EventAction::FreeRequested, seg, 512)));
        QCOMPARE(copy.blocks().at(seg).state, alloc::BlockState::ActivePendingFree);
        QCOMPARE(model.blocks().at(seg).state, alloc::BlockState::ActiveAllocated);
        storage::SegmentStateModel assigned;
        assigned = model;
        QVERIFY(assigned.apply(modelEvent(seq, alloc::EventAction::FreeRequested, seg, 512)));
        QCOMPARE(assigned.blocks().at(seg).state, alloc::BlockState::ActivePendingFree);
        QCOMPARE(model.blocks().at(seg).state, alloc::BlockState::ActiveAllocated);
        QVERIFY(model.apply(modelEvent(seq, alloc::EventAction::FreeRequested, seg, 512)));
        QCOMPARE(model.blocks().at(seg).state, alloc::BlockState::ActivePendingFree);
    }

    void eventPastTheEndIsAnError() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("s.allocscope").toStdString();
        RecordedRun run;
        {
            storage::SessionWriter writer(path);
            run = recordProgram(&writer, randomProgram(3, 200), "default");
        }
        storage::SessionReader reader(path);
        storage::StateCursor cursor(reader, run.runNumber);
        bool threw = false;
        try {
            cursor.load(run.events.size());
        } catch (const storage::SessionError& e) {
            threw = std::string(e.what()).find("past the end") != std::string::npos;
        }
        QVERIFY(threw);
        threw = false;
        try {
            storage::StateCursor other(reader, 99);
        } catch (const storage::SessionError& e) {
            threw = std::string(e.what()).find("no run 99") != std::string::npos;
        }
        QVERIFY(threw);
    }

    // A heatmap cell's shares are rounded cumulatively, halves away from zero (std::lround):
    // one row of 510 bytes, so that a byte is exactly half a step of 255.
    void heatmapSharesRoundHalvesUp() {
        storage::HeatmapSample sample;
        sample.seq = 7;
        const std::uint64_t base = 0x100000;
        // Shares add up in HeatShare order: Requested, RoundingWaste, Inactive, PendingFree.
        sample.intervals = {{base, base + 1, storage::HeatShare::Requested, false},         // 0.5 -> 1
                            {base + 1, base + 3, storage::HeatShare::RoundingWaste, false},  // 1.5 -> 2: 1 more
                            {base + 3, base + 4, storage::HeatShare::PendingFree, false},    // 510 bytes: 255
                            {base + 4, base + 510, storage::HeatShare::Inactive, false}};    // 509 bytes: 254.5 -> 255
        const storage::HeatmapGrid grid = storage::HeatmapRaster::rasterize({sample}, 1);
        QCOMPARE(grid.rows, 1);
        QCOMPARE(grid.axisBytes, std::uint64_t{510});
        QCOMPARE(int(grid.plane(storage::HeatShare::Requested)[0]), 1);
        QCOMPARE(int(grid.plane(storage::HeatShare::RoundingWaste)[0]), 1);
        QCOMPARE(int(grid.plane(storage::HeatShare::Inactive)[0]), 253);
        QCOMPARE(int(grid.plane(storage::HeatShare::PendingFree)[0]), 0);  // nothing left after 255
        // Just below a half rounds down: 1 byte of 511 is 0.499 of a step.
        storage::HeatmapSample below = sample;
        below.intervals.back().end = base + 511;
        const storage::HeatmapGrid under = storage::HeatmapRaster::rasterize({below}, 1);
        QCOMPARE(int(under.plane(storage::HeatShare::Requested)[0]), 0);
    }
};

QTEST_GUILESS_MAIN(TestSessionState)
#include "TestSessionState.moc"
