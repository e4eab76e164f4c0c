// A snapshot whose recorded history starts mid-run (a ring buffer that overflowed, a state-only
// snapshot), imported into a session through the real path: the run is marked with where its
// history starts, the events before that point (cause "restored") rebuild the state it started
// in, the state at the first recorded event holds the restored blocks, and the run still ends in
// the snapshot's final state.
#include <QtTest>

#include "StorageTestSupport.h"
#include "allocator/core/RestorePlan.h"
#include "allocator/replay/HistoryWindow.h"
#include "storage/import/TraceImport.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionReader.h"
#include "storage/session/StateCursor.h"

using namespace allocscope;

namespace {

QString pool(const QString& name) {
    return QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/pools/" + name + ".pickle";
}

// Addresses, sizes and states of every block, and the requested sizes of live ones: a session
// cannot know the stale requested size of a restored free block (no event carries it).
std::string liveLayoutDifference(const std::vector<alloc::SegmentInfo>& want, const std::vector<alloc::SegmentInfo>& got) {
    if (want.size() != got.size()) return std::to_string(got.size()) + " segments, not " + std::to_string(want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        const alloc::SegmentInfo& w = want[i];
        const alloc::SegmentInfo& g = got[i];
        if (w.address != g.address || w.totalSize != g.totalSize || w.activeSize != g.activeSize ||
            w.requestedSize != g.requestedSize || w.isExpandable != g.isExpandable || w.blocks.size() != g.blocks.size()) {
            return "segment " + std::to_string(w.address) + " differs";
        }
        for (std::size_t b = 0; b < w.blocks.size(); ++b) {
            const alloc::BlockInfo& x = w.blocks[b];
            const alloc::BlockInfo& y = g.blocks[b];
            const bool live = x.state != alloc::BlockState::Inactive;
            if (x.address != y.address || x.size != y.size || x.state != y.state || (live && x.requestedSize != y.requestedSize)) {
                return "block " + std::to_string(x.address) + " differs";
            }
        }
    }
    return "";
}

struct Imported {
    storage::RunRow row;
    alloc::RecordedTrace trace;
};

Imported importPool(const QString& name, const QTemporaryDir& dir) {
    const std::string path = dir.filePath(name + ".allocscope").toStdString();
    {
        storage::SessionWriter writer(path);
        storage::ImportTarget target;
        target.totalMemory = 85'017'493'504ull;  // the recording's H100
        const std::vector<storage::ImportedRun> runs = storage::importTraceFile(writer, pool(name).toStdString(), target);
        if (runs.size() != 1 || !runs.front().divergence.empty()) qFatal("the import diverged");
    }
    storage::SessionReader reader(path);
    return Imported{reader.run(1), storage::importTraceFile(pool(name).toStdString()).front()};
}

}  // namespace

class TestTruncatedImport : public QObject {
    Q_OBJECT

private slots:
    void ringBuffer() {
        QTemporaryDir dir;
        const Imported imported = importPool("ringbuf_train__default", dir);
        const alloc::HistoryWindow window(imported.trace, {});
        QVERIFY(window.truncated());

        // The mark, read back from the file (and listed with the other runs).
        QVERIFY(imported.row.historyStart.has_value());
        const storage::HistoryStart start = *imported.row.historyStart;
        QVERIFY(!start.noHistory);
        QCOMPARE(start.liveBlocks, window.liveBlocks());
        QCOMPARE(start.liveBytes, window.liveBytes());
        QVERIFY(start.firstSeq > 0 && start.firstSeq < imported.row.eventCount);
        storage::SessionReader reader(dir.filePath("ringbuf_train__default.allocscope").toStdString());
        QCOMPARE(reader.runs().front().historyStart, imported.row.historyStart);

        // The events before the history starts are the restored state; the history follows.
        const storage::EventPage page = reader.events(1, 0, start.firstSeq + 1);
        for (std::uint64_t i = 0; i < start.firstSeq; ++i) QCOMPARE(page.events[i].cause, alloc::EventCause::Restored);
        QCOMPARE(page.events[start.firstSeq].cause, alloc::EventCause::Program);

        // The state when the history starts: the restored blocks, and the restored allocator's
        // own statistics (not totals the restore events would imply).
        storage::StateCursor cursor(reader, 1);
        const storage::StateAtEvent atStart = cursor.load(start.firstSeq - 1);
        QCOMPARE(QString::fromStdString(liveLayoutDifference(window.initialSegments(), atStart.segments)), QString());
        std::uint64_t live = 0;
        for (const alloc::SegmentInfo& s : atStart.segments) {
            for (const alloc::BlockInfo& b : s.blocks) live += b.state != alloc::BlockState::Inactive;
        }
        QCOMPARE(live, start.liveBlocks);
        alloc::SimulatedDevice device(85'017'493'504ull, 0);
        const auto plan = alloc::planRestore(window.initialSegments(), {}, device.totalMemory());
        std::size_t next = 0;
        device.setAddressOracle([&](const alloc::PlacementRequest&) { return std::optional(plan.at(next++).address); });
        alloc::CachingAllocator restored({}, device);
        restored.restoreSegments(window.initialSegments());
        QCOMPARE(QString::fromStdString(storagetest::statsDifference(restored.stats(), atStart.stats)), QString());
        // The first recorded event still sees them.
        const storage::StateAtEvent first = cursor.load(start.firstSeq);
        QCOMPARE(first.stats.segment[alloc::kAggregate].current, restored.stats().segment[alloc::kAggregate].current);

        // And the run ends in the snapshot's state.
        const storage::StateAtEvent last = cursor.load(imported.row.eventCount - 1);
        QCOMPARE(QString::fromStdString(liveLayoutDifference(*imported.trace.finalSegments, last.segments)), QString());
        QCOMPARE(last.stats.allocated_bytes[alloc::kAggregate].current, std::int64_t{68'157'440});
        QCOMPARE(last.stats.reserved_bytes[alloc::kAggregate].current, std::int64_t{1'243'611'136});
    }

    void stateOnly() {
        QTemporaryDir dir;
        const Imported imported = importPool("stateonly_train__default", dir);
        QVERIFY(imported.row.historyStart.has_value());
        QVERIFY(imported.row.historyStart->noHistory);
    }

    // A snapshot of two devices (tests/data/scripts/make_two_devices.py): device 0 a CUDA-graph
    // capture with its private pool, device 1 state-only. The import makes one run per device,
    // each replayed exactly from its own history; only device 1's is marked as starting mid-run,
    // and each run ends in its own device's final state (device 0's graph-pool segments included).
    void twoDevicesPoolAndStateOnly() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("two.allocscope").toStdString();
        const std::string file = pool("two_devices__default").toStdString();
        {
            storage::SessionWriter writer(path);
            storage::ImportTarget target;
            target.totalMemory = 85'017'493'504ull;
            const std::vector<storage::ImportedRun> runs = storage::importTraceFile(writer, file, target);
            QCOMPARE(runs.size(), std::size_t{2});
            for (const storage::ImportedRun& run : runs) QCOMPARE(QString::fromStdString(run.divergence), QString());
        }
        const std::vector<alloc::RecordedTrace> traces = storage::importTraceFile(file);
        QCOMPARE(traces.size(), std::size_t{2});
        storage::SessionReader reader(path);
        const std::vector<storage::RunRow> rows = reader.runs();
        QCOMPARE(rows.size(), std::size_t{2});
        QCOMPARE(rows[0].info.name, std::string("two_devices__default.pickle device 0"));
        QCOMPARE(rows[1].info.name, std::string("two_devices__default.pickle device 1"));
        QVERIFY(!rows[0].historyStart.has_value());
        QVERIFY(rows[1].historyStart.has_value() && rows[1].historyStart->noHistory);
        QCOMPARE(rows[0].summary->peakReserved, std::int64_t{429'916'160});  // cudagraph_mlp's JSON
        for (std::size_t d = 0; d < 2; ++d) {
            storage::StateCursor cursor(reader, rows[d].number);
            const storage::StateAtEvent last = cursor.load(rows[d].eventCount - 1);
            QCOMPARE(QString::fromStdString(liveLayoutDifference(*traces[d].finalSegments, last.segments)), QString());
        }
        std::size_t poolSegments = 0;
        for (const alloc::SegmentInfo& s : *traces[0].finalSegments) poolSegments += !s.poolId.isDefault();
        QCOMPARE(poolSegments, std::size_t{3});
    }

    // A whole history is not marked, and a file without the history_start table reads as before.
    void wholeHistoryIsNotMarked() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("whole.allocscope").toStdString();
        {
            storage::SessionWriter writer(path);
            const std::string trace = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")).toStdString() +
                                      "/traces/frag101__default.pickle";
            storage::importTraceFile(writer, trace, {});
        }
        storage::SessionReader reader(path);
        QVERIFY(!reader.run(1).historyStart);
        QVERIFY(!reader.runs().front().historyStart);
    }
};

QTEST_GUILESS_MAIN(TestTruncatedImport)
#include "TestTruncatedImport.moc"
