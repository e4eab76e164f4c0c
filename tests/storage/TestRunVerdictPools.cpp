// A run's verdict (was it compared with a recording, and how did that come out) and each
// segment's private pool, as sessions store them: an exact import reads "exact", a replay that
// leaves the recording reads "diverged at trace entry K", a what-if and a workload run are not
// compared, a session without the run_verdict table (every older one) reads "unknown" and is not
// written. Pool ids ride on segment events (EventCodec) and keyframes (StateCodec) with older
// chunks decoding as the default pool; the state, the pickle export and the timeline/heatmap
// (reserved bytes include private pools, as PyTorch's reserved_bytes does) all see them.
#include <QtTest>

#include <QTemporaryDir>

#include <cstdint>
#include <map>
#include <string>

#include "tests/FileBytes.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/replay/DriverPlacementModel.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "storage/formats/PickleWriter.h"
#include "storage/import/TraceImport.h"
#include "storage/session/ByteCodec.h"
#include "storage/session/EventCodec.h"
#include "storage/session/HeatmapQuery.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionExport.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionWriter.h"
#include "storage/session/SqliteDb.h"
#include "storage/session/StateCodec.h"
#include "storage/session/StateCursor.h"
#include "storage/session/TimelineQuery.h"

using namespace allocscope;

namespace {

std::string data(const char* name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/" + name; }

constexpr std::uint64_t kH100 = 85'017'493'504ull;            // the recordings' total memory
constexpr std::int64_t kMlpReserved = 429'916'160;          // PyTorch's reserved_bytes.all.current (cudagraph_mlp__default.json)
constexpr std::uint64_t kMlpGraphPoolBytes = 54ull << 20;   // its three (1,0) segments: 2 + 20 + 32 MiB

storage::RunRow importOne(const QString& session, const char* trace, storage::ImportTarget target = {}) {
    if (target.totalMemory == 0) target.totalMemory = kH100;
    {
        storage::SessionWriter writer(session.toStdString());
        const auto runs = storage::importTraceFile(writer, data(trace), target);
        if (runs.size() != 1) qFatal("expected one run");
        writer.flush();
    }
    return storage::SessionReader(session.toStdString()).run(1);
}

}  // namespace

class TestRunVerdictPools : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString mlp_;  // cudagraph_mlp__default imported

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        mlp_ = dir_.filePath("mlp.allocscope");
        importOne(mlp_, "pools/cudagraph_mlp__default.pickle");
    }

    void exactImportStoresExact() {
        const storage::RunRow run = storage::SessionReader(mlp_.toStdString()).run(1);
        QCOMPARE(run.divergence, std::string());
        QCOMPARE(run.verdict.kind, storage::VerdictKind::Exact);
        QCOMPARE(run.verdict.text, std::string("exact"));
        QVERIFY(!run.verdict.entry.has_value());
        // runs() reads the same table as run().
        QCOMPARE(storage::SessionReader(mlp_.toStdString()).runs().front().verdict, run.verdict);
    }

    // Under a memory fraction far below what the program used, allocations fail where PyTorch's
    // succeeded: the replay diverges, and its verdict must say where and never "exact".
    void divergedReplayStoresDiverged() {
        storage::ImportTarget target;
        target.memoryFraction = 0.001;
        const storage::RunRow run = importOne(dir_.filePath("diverged.allocscope"), "traces/frag101__default.pickle", target);
        QVERIFY(!run.divergence.empty());
        QCOMPARE(run.verdict.kind, storage::VerdictKind::Diverged);
        QVERIFY2(run.verdict.text.rfind("diverged at trace entry ", 0) == 0, run.verdict.text.c_str());
        QVERIFY(run.verdict.entry.has_value());
        QVERIFY2(run.verdict.text.find("entry " + std::to_string(*run.verdict.entry) + ":") != std::string::npos, run.verdict.text.c_str());
        QVERIFY(run.verdict.text.find("exact") == std::string::npos);
    }

    void whatIfIsNotCompared() {
        const QString session = dir_.filePath("whatif.allocscope");
        const std::vector<alloc::RecordedTrace> traces = storage::importTraceFile(data("traces/frag101__default.pickle"));
        QCOMPARE(traces.size(), std::size_t{1});
        alloc::DriverPlacementModel placement(traces.front());
        alloc::ReplayOptions options;
        options.config = alloc::parseConfig("expandable_segments:True").config;
        options.totalMemory = kH100;
        options.otherMemory = alloc::findGpuPreset("h100-80gb")->contextMemory;
        options.placement = &placement;
        options.continueAfterOom = true;
        storage::RunInfo info;
        info.name = "frag101 what-if";
        info.sourceKind = "snapshot";
        info.config = "expandable_segments:True";
        {
            storage::SessionWriter writer(session.toStdString());
            storage::recordReplay(writer, traces.front(), options, info, alloc::parseConfig("").config);
            writer.flush();
        }
        const storage::RunVerdict verdict = storage::SessionReader(session.toStdString()).run(1).verdict;
        QCOMPARE(verdict.kind, storage::VerdictKind::WhatIf);
        QVERIFY2(verdict.text.rfind("what-if (not compared)", 0) == 0, verdict.text.c_str());
        // The session keeps how many decisions rested on modelled addresses (the tooltip shows it).
        QVERIFY2(verdict.text.find("\n0 of 0 best-fit ties between equal free blocks were broken by a modelled segment address") !=
                     std::string::npos,
                 verdict.text.c_str());
    }

    void workloadRunIsSimulated() {
        const QString session = dir_.filePath("workload.allocscope");
        {
            storage::SessionWriter writer(session.toStdString());
            const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get("fragmentation-101");
            const alloc::GeneratedProgram program = workload.generate(workload.resolve(), 1);
            storage::RecordTarget target;
            target.info.name = "fragmentation-101";
            target.info.gpu = "h100-80gb";
            target.info.totalMemory = kH100;
            target.totalMemory = kH100;
            storage::recordProgram(writer, program.program, &program.stacks, target);
            writer.flush();
        }
        const storage::RunVerdict verdict = storage::SessionReader(session.toStdString()).run(1).verdict;
        QCOMPARE(verdict.kind, storage::VerdictKind::Simulated);
        QVERIFY(verdict.text.rfind("simulated", 0) == 0);
    }

    // A session recorded before verdicts existed has no run_verdict table: its replays read as
    // Unknown (not exact), and reading creates nothing: the file stays byte-identical.
    void olderSessionReadsUnknownAndIsNotWritten() {
        const QString old = dir_.filePath("old.allocscope");
        QVERIFY(QFile::copy(mlp_, old));
        {
            storage::SqliteDb db(old.toStdString(), storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("DROP TABLE run_verdict");
        }
        const QByteArray before = testfiles::sha256Of(old);
        {
            storage::SessionReader reader(old.toStdString());
            QCOMPARE(reader.run(1).verdict.kind, storage::VerdictKind::Unknown);
            QCOMPARE(reader.runs().front().verdict.kind, storage::VerdictKind::Unknown);
            QCOMPARE(reader.run(1).verdict.text, std::string());
        }
        QCOMPARE(testfiles::sha256Of(old), before);
        // A kind this build does not know (a newer build's) is not passed off as one it knows.
        {
            storage::SqliteDb db(old.toStdString(), storage::SqliteDb::Mode::ReadWriteCreate);
            db.exec("CREATE TABLE run_verdict (run INTEGER PRIMARY KEY, kind TEXT NOT NULL, text TEXT NOT NULL, entry INTEGER);"
                    "INSERT INTO run_verdict VALUES (1, 'exactish', 'exact', NULL)");
        }
        QCOMPARE(storage::SessionReader(old.toStdString()).run(1).verdict.kind, storage::VerdictKind::Unknown);
    }

    // Every segment of the final state carries the pool PyTorch's snapshot gives it.
    void segmentPoolsMatchTheSnapshot() {
        const std::vector<alloc::RecordedTrace> traces = storage::importTraceFile(data("pools/cudagraph_mlp__default.pickle"));
        QVERIFY(traces.front().finalSegments.has_value());
        std::map<std::uint64_t, alloc::PoolId> expected;
        for (const alloc::SegmentInfo& s : *traces.front().finalSegments) expected[s.address] = s.poolId;
        storage::SessionReader reader(mlp_.toStdString());
        storage::StateCursor cursor(reader, 1);
        const storage::StateAtEvent state = cursor.load(cursor.eventCount() - 1);
        std::map<std::uint64_t, alloc::PoolId> got;
        int graphSegments = 0;
        for (const alloc::SegmentInfo& s : state.segments) {
            got[s.address] = s.poolId;
            graphSegments += s.poolId == alloc::PoolId{1, 0};
        }
        QCOMPARE(graphSegments, 3);
        QVERIFY(got == expected);
    }

    // Session -> pickle export -> import: segment_pool_id survives (it used to be written (0, 0)).
    void pickleExportKeepsSegmentPoolIds() {
        storage::SessionReader reader(mlp_.toStdString());
        const std::uint64_t last = reader.run(1).eventCount - 1;
        const formats::Snapshot snap = storage::SessionExport::snapshot(reader, 1, 0, last);
        int graph = 0;
        for (const formats::SnapshotSegment& s : snap.segments) graph += s.segment_pool_id == std::pair<std::uint64_t, std::uint64_t>{1, 0};
        QCOMPARE(graph, 3);
        const std::string out = dir_.filePath("mlp-export.pickle").toStdString();
        formats::PickleWriter::writeFile(snap, out);
        const std::vector<alloc::RecordedTrace> again = storage::importTraceFile(out);
        QVERIFY(again.front().finalSegments.has_value());
        int graphAgain = 0;
        for (const alloc::SegmentInfo& s : *again.front().finalSegments) graphAgain += s.poolId == alloc::PoolId{1, 0};
        QCOMPARE(graphAgain, 3);
    }

    // A chunk written before pool ids existed (no marker byte) decodes in the default pool; a
    // pool id round-trips; a run without private pools is encoded exactly as before.
    void eventCodecPoolIdsAndOldChunks() {
        // One segment_alloc (action 3) at 0x200000 of 2 MiB, in the pre-pool format:
        // head, op, address (zigzag), size, rounded - size, stream, address - segment, stack.
        const unsigned char bytes[] = {0x03, 0x00, 0x80, 0x80, 0x80, 0x02, 0x80, 0x80, 0x80, 0x01, 0x00, 0x00, 0x00, 0x00};
        const std::string old(reinterpret_cast<const char*>(bytes), sizeof bytes);
        std::vector<alloc::Event> decoded;
        storage::EventCodec::decode(old, 0, 1, decoded);
        QCOMPARE(decoded.size(), std::size_t{1});
        QCOMPARE(decoded[0].action, alloc::EventAction::SegmentAlloc);
        QCOMPARE(decoded[0].address, std::uint64_t{0x200000});
        QCOMPARE(decoded[0].size, std::uint64_t{0x200000});
        QVERIFY(decoded[0].poolId.isDefault());

        alloc::Event e = decoded[0];
        std::string blob;
        storage::EventCodec::encode(&e, 1, blob);
        QCOMPARE(blob, old);  // default pool: byte for byte the old encoding
        e.poolId = {0, 7};
        alloc::Event block = e;
        block.action = alloc::EventAction::Alloc;
        block.poolId = {};
        const alloc::Event both[2] = {e, block};
        storage::EventCodec::encode(both, 2, blob);
        QCOMPARE(static_cast<std::uint8_t>(blob[0]), storage::EventCodec::kPoolMarker);
        decoded.clear();
        storage::EventCodec::decode(blob, 10, 2, decoded);
        QVERIFY(decoded[0].poolId == (alloc::PoolId{0, 7}));
        QVERIFY(decoded[1].poolId.isDefault());
        QCOMPARE(decoded[1].seq, std::uint64_t{11});
    }

    // The encoder writes through a pointer into a buffer sized for the worst case; its bytes
    // must be ByteWriter's (the session format) for every width of every field, the largest
    // values and backward deltas included, and decode back to the same events.
    void eventCodecMatchesByteWriterAtEveryWidth() {
        std::vector<alloc::Event> events;
        const std::uint64_t values[] = {0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 1ull << 35, (1ull << 63) - 1, 1ull << 63, ~0ull};
        std::uint64_t op = 0;
        for (const std::uint64_t v : values) {
            alloc::Event e;
            e.action = alloc::EventAction::FreeCompleted;
            e.cause = alloc::EventCause::EmptyCache;
            e.pool = alloc::PoolKind::Small;
            e.opIndex = op += v / 3;  // op indices only grow
            e.address = v;
            e.size = ~v;
            e.roundedSize = v;
            e.stream = v ^ 0x5555;
            e.segment = v / 2;
            e.stackId = static_cast<std::uint32_t>(v);
            if (v % 2 == 1) e.poolId = {v, ~v};
            events.push_back(e);
        }
        storage::ByteWriter w;
        std::uint64_t prevOp = 0, prevAddress = 0, prevStream = 0;
        for (const alloc::Event& e : events) {
            const bool privatePool = !e.poolId.isDefault();
            if (privatePool) w.byte(storage::EventCodec::kPoolMarker);
            w.byte(static_cast<std::uint8_t>(static_cast<unsigned>(e.action) | (static_cast<unsigned>(e.cause) << 4) | 0x80u));
            w.varint(e.opIndex - prevOp);
            w.svarint(static_cast<std::int64_t>(e.address - prevAddress));
            w.varint(e.size);
            w.svarint(static_cast<std::int64_t>(e.roundedSize - e.size));
            w.svarint(static_cast<std::int64_t>(e.stream - prevStream));
            w.svarint(static_cast<std::int64_t>(e.address - e.segment));
            w.varint(e.stackId);
            if (privatePool) {
                w.varint(e.poolId.first);
                w.varint(e.poolId.second);
            }
            prevOp = e.opIndex;
            prevAddress = e.address;
            prevStream = e.stream;
        }
        std::string blob;
        storage::EventCodec::encode(events.data(), events.size(), blob);
        QCOMPARE(blob.size(), w.bytes().size());
        QVERIFY(blob == w.bytes());
        std::vector<alloc::Event> decoded;
        storage::EventCodec::decode(blob, 0, events.size(), decoded);
        QCOMPARE(decoded.size(), events.size());
        for (std::size_t i = 0; i < events.size(); ++i) {
            alloc::Event expected = events[i];
            expected.seq = i;
            QVERIFY2(decoded[i].address == expected.address && decoded[i].size == expected.size &&
                         decoded[i].roundedSize == expected.roundedSize && decoded[i].stream == expected.stream &&
                         decoded[i].segment == expected.segment && decoded[i].opIndex == expected.opIndex &&
                         decoded[i].stackId == expected.stackId && decoded[i].poolId == expected.poolId,
                     qPrintable(QString("event %1 differs after a round trip").arg(i)));
        }
    }

    // Keyframes keep each segment's pool (older keyframes, without the flag, read as default).
    void keyframesKeepSegmentPools() {
        storage::SegmentStateModel model;
        alloc::Event seg;
        seg.action = alloc::EventAction::SegmentAlloc;
        seg.address = seg.segment = 0x400000;
        seg.size = seg.roundedSize = 2 << 20;
        seg.pool = alloc::PoolKind::Small;
        seg.poolId = {3, 0};
        QVERIFY(model.apply(seg));
        alloc::Event other = seg;
        other.address = other.segment = 0x800000;
        other.poolId = {};
        QVERIFY(model.apply(other));
        const std::string blob = storage::StateCodec::encodeKeyframe(model);
        storage::SegmentStateModel back;
        storage::StateCodec::decodeKeyframe(blob, model.applied(), back);
        QVERIFY(back.segmentTable().at(0x400000).poolId == (alloc::PoolId{3, 0}));
        QVERIFY(back.segmentTable().at(0x800000).poolId.isDefault());
        QVERIFY(back.segmentTable() == model.segmentTable());
    }

    // PyTorch's reserved_bytes counts private-pool segments; so do the timeline and the heatmap.
    void reservedIncludesPrivatePools() {
        storage::SessionReader reader(mlp_.toStdString());
        const std::uint64_t count = reader.run(1).eventCount;
        const storage::Timeline timeline = storage::TimelineQuery::build(reader, 1, 0, count - 1, 64);
        QVERIFY(!timeline.buckets.empty());
        QCOMPARE(timeline.buckets.back().reserved.max, kMlpReserved);
        QCOMPARE(reader.run(1).summary->peakReserved, kMlpReserved);

        const storage::HeatmapGrid grid = storage::HeatmapQuery::build(reader, 1, 0, count - 1, 16, 512);
        QVERIFY(grid.consistent());
        // Bytes covered by any state at the last column ~ reserved bytes (cells are rounded to
        // 1/255 of a row): within 1%, where leaving out the graph pool would miss 54 MiB (13%).
        double covered = 0;
        const double rowBytes = static_cast<double>(grid.axisBytes) / grid.rows;
        const std::size_t column = static_cast<std::size_t>(grid.columns - 1);
        for (int row = 0; row < grid.rows; ++row) {
            const std::size_t cell = column * static_cast<std::size_t>(grid.rows) + static_cast<std::size_t>(row);
            int share = 0;
            for (const auto& plane : grid.shares) share += plane[cell];
            covered += rowBytes * std::min(share, 255) / 255.0;
        }
        QVERIFY2(std::abs(covered - static_cast<double>(kMlpReserved)) < 0.01 * static_cast<double>(kMlpReserved),
                 qPrintable(QString::number(covered, 'f', 0)));
        QVERIFY(static_cast<double>(kMlpReserved - static_cast<std::int64_t>(kMlpGraphPoolBytes)) < 0.9 * covered);
    }
};

QTEST_GUILESS_MAIN(TestRunVerdictPools)
#include "TestRunVerdictPools.moc"
