// storage/import: a snapshot or an RMM log becomes the allocator's RecordedTrace(s) -- one per
// device, the device's own segments as the final layout, annotations as phase marks placed by
// time, legacy "free" split in two -- and bad input is a FormatError that names the entry.
#include <QtTest>

#include <QTemporaryDir>

#include <algorithm>
#include <map>
#include <set>

#include "allocator/replay/TraceReplayer.h"
#include "storage/formats/FormatError.h"
#include "storage/formats/PickleWriter.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/import/FrameLine.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

namespace {

formats::TraceEntry entry(const std::string& action, std::uint64_t addr, std::uint64_t size, std::int64_t time) {
    formats::TraceEntry e;
    e.action = action;
    e.addr = addr;
    e.has_addr = true;
    e.size = size;
    e.time_us = time;
    return e;
}

formats::SnapshotSegment segment(std::int64_t device, std::uint64_t address, std::uint64_t size, const std::string& state) {
    formats::SnapshotSegment s;
    s.device = device;
    s.address = address;
    s.total_size = size;
    s.segment_type = "large";
    formats::SnapshotBlock b;
    b.address = address;
    b.size = size;
    b.state = state;
    s.blocks.push_back(b);
    return s;
}

formats::Snapshot twoDevices() {
    formats::Snapshot snap;
    snap.allocator_settings.present = true;
    snap.allocator_settings.conf = "max_split_size_mb:128";
    snap.device_traces.resize(2);
    snap.device_traces[0] = {entry("segment_alloc", 0x1000, 20971520, 10), entry("alloc", 0x1000, 4096, 20),
                             entry("free", 0x1000, 4096, 30)};
    formats::TraceEntry oom;
    oom.action = "oom";
    oom.size = 2097152;
    oom.device_free = 12345;
    oom.has_device_free = true;
    oom.time_us = 40;
    snap.device_traces[1] = {entry("segment_alloc", 0x9000, 2097152, 5), oom, entry("annotate", 0x9000, 0, 41)};
    snap.segments = {segment(1, 0x9000, 2097152, "inactive"), segment(0, 0x1000, 20971520, "inactive"),
                     segment(-1, 0x50, 4096, "active_allocated")};
    snap.external_annotations = {{"step", "START", 0, 15}, {"step", "END", 0, 35}, {"other", "START", 1, 0}};
    return snap;
}

std::string dataPath(const std::string& relative) {
    return QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")).toStdString() + "/" + relative;
}

// The PyTorch 2.11 traces of tests/data/pools, from python3: entries of device_traces[0] (no
// annotate entries there), final segments, those not in the default pool, distinct non-empty
// stacks (entries, segments, blocks; a line >= 2**63 read as unknown), frames with an unknown
// line over those stacks, record_function marks on device 0.
struct PoolTrace {
    const char* name;
    std::size_t entries, segments, privateSegments, stacks, unknownLines, phases;
};

const PoolTrace kPoolTraces[] = {
    {"compile_reduce_overhead__default", 248, 8, 4, 47, 1, 0},
    {"compile_reduce_overhead__expandable", 241, 5, 2, 45, 1, 0},
    {"cppstacks_train__default", 4247, 68, 0, 42, 0, 32},
    {"cudagraph_mlp__default", 255, 14, 3, 16, 0, 0},
    {"cudagraph_mlp__expandable", 254, 7, 2, 16, 0, 0},
    {"mempool_mix__default", 220, 0, 0, 6, 0, 0},
    {"mempool_mix__expandable", 197, 0, 0, 6, 0, 0},
    {"ringbuf_train__default", 3000, 68, 0, 15, 0, 32},
    {"ringbuf_train__expandable", 3000, 2, 0, 12, 0, 32},
    {"stateonly_train__default", 1, 68, 0, 5, 0, 1},
};

std::size_t unknownLines(const alloc::StackTable& stacks) {
    std::size_t n = 0;
    for (std::uint32_t id = 1; id < stacks.size(); ++id) {
        for (const alloc::Frame& f : stacks.stack(id)) n += !storage::FrameLine::known(f.line);
    }
    return n;
}

// The snapshot's own pool id for each of its device's segments, by address.
std::map<std::uint64_t, alloc::PoolId> poolsOf(const formats::Snapshot& snap, std::int64_t device) {
    std::map<std::uint64_t, alloc::PoolId> pools;
    for (const formats::SnapshotSegment& s : snap.segments) {
        if (s.device == device) pools[s.address] = alloc::PoolId{s.segment_pool_id.first, s.segment_pool_id.second};
    }
    return pools;
}

// What a RecordedEntry says, for comparing two imports of the same history.
bool sameEntries(const alloc::RecordedTrace& x, const alloc::RecordedTrace& y) {
    const alloc::SpillArray<alloc::RecordedEntry>& a = x.entries;
    const alloc::SpillArray<alloc::RecordedEntry>& b = y.entries;
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].action != b[i].action || a[i].address != b[i].address || a[i].size != b[i].size ||
            x.stream(a[i]) != y.stream(b[i])) {
            return false;
        }
    }
    return true;
}

}  // namespace

class TestTraceImport : public QObject {
    Q_OBJECT

private slots:
    void oneTracePerDevice() {
        const std::vector<alloc::RecordedTrace> traces = storage::tracesFromSnapshot(twoDevices());
        QCOMPARE(traces.size(), std::size_t{2});
        const alloc::RecordedTrace& d0 = traces[0];
        QCOMPARE(d0.device, std::int64_t{0});
        QCOMPARE(d0.settings.value_or("?"), std::string("max_split_size_mb:128"));
        QVERIFY(d0.hasSegmentEvents);
        // The legacy single "free" becomes free_requested + free_completed.
        QCOMPARE(d0.entries.size(), std::size_t{4});
        QCOMPARE(d0.entries[2].action, alloc::EventAction::FreeRequested);
        QCOMPARE(d0.entries[3].action, alloc::EventAction::FreeCompleted);
        QCOMPARE(d0.entries[3].address, std::uint64_t{0x1000});
        // Only this device's segments (not device 1's, not the host's).
        QCOMPARE(d0.finalSegments->size(), std::size_t{1});
        QCOMPARE(d0.finalSegments->front().address, std::uint64_t{0x1000});
        // Phase marks: START at 15 falls before the alloc (time 20), END at 35 after everything.
        QCOMPARE(d0.phases.size(), std::size_t{2});
        QCOMPARE(d0.phases[0].entryIndex, std::size_t{1});
        QVERIFY(d0.phases[0].begin);
        QCOMPARE(d0.phases[1].entryIndex, std::size_t{4});
        QVERIFY(!d0.phases[1].begin);

        const alloc::RecordedTrace& d1 = traces[1];
        QCOMPARE(d1.device, std::int64_t{1});
        QCOMPARE(d1.entries.size(), std::size_t{2});  // the annotate entry carries no decision
        QCOMPARE(d1.entries[1].action, alloc::EventAction::Oom);
        QCOMPARE(d1.entries[1].address, std::uint64_t{12345});  // its device_free, where PyTorch keeps it too
        QCOMPARE(d1.entries[1].size, std::uint64_t{2097152});
        QCOMPARE(d1.phases.size(), std::size_t{1});
    }

    void rmmLog() {
        formats::RmmLog log;
        log.records = {{1, "t", formats::RmmAction::Allocate, 0x2000, 512, 0, 2},
                       {1, "t", formats::RmmAction::AllocateFailure, 0, 1 << 30, 0, 3},
                       {1, "t", formats::RmmAction::Free, 0x2000, 512, 0, 4}};
        const alloc::RecordedTrace t = storage::traceFromRmmLog(log);
        QVERIFY(!t.hasSegmentEvents);
        QVERIFY(!t.settings.has_value());
        QVERIFY(!t.finalSegments.has_value());
        QCOMPARE(t.entries.size(), std::size_t{4});
        QCOMPARE(t.entries[1].action, alloc::EventAction::Oom);
        QCOMPARE(t.entries[2].action, alloc::EventAction::FreeRequested);
        QCOMPARE(t.entries[3].action, alloc::EventAction::FreeCompleted);
    }

    void badInput_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("where");
        QTest::newRow("unknown action") << 0 << "device_traces[0][1]";
        QTest::newRow("missing addr") << 1 << "device_traces[0][0]";
        QTest::newRow("unknown block state") << 2 << "segments[0].blocks[0]";
        QTest::newRow("unknown segment type") << 3 << "segments[0]";
    }
    void badInput() {
        QFETCH(int, kind);
        QFETCH(QString, where);
        formats::Snapshot snap;
        snap.device_traces.resize(1);
        snap.device_traces[0] = {entry("segment_alloc", 0x1000, 2097152, 1), entry("alloc", 0x1000, 512, 2)};
        if (kind == 0) snap.device_traces[0][1].action = "allocate";
        if (kind == 1) snap.device_traces[0][0].has_addr = false;
        if (kind == 2) snap.segments = {segment(0, 0x1000, 2097152, "busy")};
        if (kind == 3) {
            snap.segments = {segment(0, 0x1000, 2097152, "inactive")};
            snap.segments[0].segment_type = "huge";
        }
        try {
            storage::tracesFromSnapshot(snap);
            QFAIL("bad input was accepted");
        } catch (const formats::FormatError& e) {
            QCOMPARE(QString::fromStdString(e.location()), where);
        }
    }

    // Every PyTorch 2.11 trace of tests/data/pools imports (private pools, compiled programs,
    // C++ stacks, ring buffers that lost their beginning, state-only snapshots), with each final
    // segment in the pool the snapshot names.
    void poolTraces_data() {
        QTest::addColumn<int>("index");
        for (int i = 0; i < int(std::size(kPoolTraces)); ++i) QTest::newRow(kPoolTraces[i].name) << i;
    }
    void poolTraces() {
        QFETCH(int, index);
        const PoolTrace& x = kPoolTraces[index];
        const std::string path = dataPath(std::string("pools/") + x.name + ".pickle");
        const std::vector<alloc::RecordedTrace> traces = storage::importTraceFile(path);
        QCOMPARE(traces.size(), std::size_t{1});
        const alloc::RecordedTrace& t = traces.front();
        QCOMPARE(t.device, std::int64_t{0});
        QCOMPARE(t.entries.size(), x.entries);
        QVERIFY(t.finalSegments.has_value());
        QCOMPARE(t.finalSegments->size(), x.segments);
        QCOMPARE(t.stacks.size(), x.stacks + 1);  // id 0 is "no stack"
        QCOMPARE(unknownLines(t.stacks), x.unknownLines);
        QCOMPARE(t.phases.size(), x.phases);
        const std::map<std::uint64_t, alloc::PoolId> pools = poolsOf(formats::SnapshotReader::readFile(path), 0);
        std::size_t privateSegments = 0;
        for (const alloc::SegmentInfo& seg : *t.finalSegments) {
            QVERIFY(pools.count(seg.address) == 1);
            QCOMPARE(seg.poolId, pools.at(seg.address));
            privateSegments += !seg.poolId.isDefault();
        }
        QCOMPARE(privateSegments, x.privateSegments);
    }

    // cudagraph_mlp: the graph's private pool is (1, 0); compile_reduce_overhead's CUDA graph
    // trees use (0, 1). Imported as they are, next to default-pool segments.
    void poolIdsOfRealTraces() {
        const auto graph = storage::importTraceFile(dataPath("pools/cudagraph_mlp__default.pickle"));
        std::set<std::pair<std::uint64_t, std::uint64_t>> ids;
        for (const alloc::SegmentInfo& seg : *graph.front().finalSegments) ids.insert({seg.poolId.first, seg.poolId.second});
        QCOMPARE(ids, (std::set<std::pair<std::uint64_t, std::uint64_t>>{{0, 0}, {1, 0}}));
        const auto compiled = storage::importTraceFile(dataPath("pools/compile_reduce_overhead__default.pickle"));
        ids.clear();
        for (const alloc::SegmentInfo& seg : *compiled.front().finalSegments) ids.insert({seg.poolId.first, seg.poolId.second});
        QCOMPARE(ids, (std::set<std::pair<std::uint64_t, std::uint64_t>>{{0, 0}, {0, 1}}));
    }

    // TorchDynamo's 2**64-1 line is not an error: the frame keeps its file and name, its line is
    // FrameLine::kUnknown (printed "file:?"), and the frames around it keep their numbers.
    void compiledProgramFramesHaveUnknownLines() {
        const auto traces = storage::importTraceFile(dataPath("pools/compile_reduce_overhead__default.pickle"));
        const alloc::RecordedTrace& t = traces.front();
        const alloc::Stack& stack = t.stacks.stack(t.entries.at(9).stackId);
        QCOMPARE(stack.size(), std::size_t{74});
        const std::string fakeTensor = "/opt/torch/.venv/lib/python3.12/site-packages/torch/_subclasses/fake_tensor.py";
        QCOMPARE(stack[0], (alloc::Frame{fakeTensor, storage::FrameLine::kUnknown, "init_gpu_context"}));
        QCOMPARE(storage::FrameLine::text(stack[0].line), std::string("?"));
        QCOMPARE(stack[1], (alloc::Frame{fakeTensor, 777, "__new__"}));
        QCOMPARE(storage::FrameLine::text(stack[1].line), std::string("777"));
        QCOMPARE(t.entries.at(10).stackId, t.entries.at(9).stackId);
    }

    // stacks="all": the C++ frames PyTorch gathered keep their demangled names and files.
    void cppFramesAreKept() {
        const auto traces = storage::importTraceFile(dataPath("pools/cppstacks_train__default.pickle"));
        const alloc::RecordedTrace& t = traces.front();
        const alloc::Stack& stack = t.stacks.stack(t.entries.at(5).stackId);
        QCOMPARE(stack.size(), std::size_t{50});
        QCOMPARE(stack[0], (alloc::Frame{"??", 0, "torch::unwind::unwind()"}));
        QCOMPARE(stack[2], (alloc::Frame{"memory_snapshot.cpp", 0, "torch::cuda::(anonymous namespace)::gather_with_cpp()"}));
        QCOMPARE(stack[3], (alloc::Frame{"CUDACachingAllocator.cpp", 0,
                                         "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned "
                                         "long, CUstream_st*)"}));
        QCOMPARE(stack.back(), (alloc::Frame{"tracegen5.py", 151, "<module>"}));
    }

    // An entry names its stream by an index into the trace's streams (24-byte entries): each
    // stream once, the default stream first, every entry's stream read back as it was recorded.
    void streamsAreNamedOnce() {
        formats::Snapshot snap;
        snap.device_traces.resize(1);
        snap.device_traces[0] = {entry("segment_alloc", 0x1000, 2097152, 10), entry("alloc", 0x1000, 512, 20),
                                 entry("alloc", 0x1200, 512, 30), entry("alloc", 0x1400, 512, 40), entry("alloc", 0x1600, 512, 50)};
        const std::vector<std::uint64_t> streams{0x7f00, 0x7f00, 0, 0x9a00, 0x7f00};
        for (std::size_t i = 0; i < streams.size(); ++i) snap.device_traces[0][i].stream = streams[i];
        const auto traces = storage::tracesFromSnapshot(snap);
        const alloc::RecordedTrace& t = traces.at(0);
        QCOMPARE(t.streams, (std::vector<alloc::StreamId>{0, 0x7f00, 0x9a00}));
        for (std::size_t i = 0; i < streams.size(); ++i) QCOMPARE(t.stream(t.entries[i]), alloc::StreamId{streams[i]});

        alloc::RecordedTrace many;
        for (alloc::StreamId s = 1; s < 65536; ++s) many.streamIndex(s);
        QCOMPARE(many.streams.size(), std::size_t{65536});
        QCOMPARE(many.streamIndex(4242), std::uint16_t{4242});
        QVERIFY_THROWS_EXCEPTION(std::length_error, many.streamIndex(65536));
    }

    // Unknown times become "no usable clock" (0); annotations whose device or time is unknown
    // cannot be placed and are left out, the others are placed as before.
    void unknownTimesAndAnnotations() {
        formats::Snapshot snap;
        snap.device_traces.resize(1);
        snap.device_traces[0] = {entry("segment_alloc", 0x1000, 2097152, 10), entry("alloc", 0x1000, 512, 20),
                                 entry("free_requested", 0x1000, 512, 30)};
        snap.device_traces[0][2].time_us = 0;
        snap.device_traces[0][2].time_us_unknown = true;
        snap.external_annotations = {{"step", "START", 0, 15}, {"lost", "START", std::nullopt, 15},
                                     {"lost", "END", 0, std::nullopt}, {"step", "END", 0, 25}};
        const auto traces = storage::tracesFromSnapshot(snap);
        QCOMPARE(traces.size(), std::size_t{1});
        QCOMPARE(traces[0].phases.size(), std::size_t{2});
        QCOMPARE(traces[0].phaseName(traces[0].phases[0]), std::string("step"));
        QCOMPARE(traces[0].phases[0].entryIndex, std::size_t{1});
        QCOMPARE(traces[0].phaseName(traces[0].phases[1]), std::string("step"));
        // The END at 25 goes after the free whose time is unknown (read as 0, before any marker),
        // not before it as the free's recorded 30 would have it.
        QCOMPARE(traces[0].phases[1].entryIndex, std::size_t{3});
    }

    // A two-device snapshot written with our PickleWriter: cudagraph_mlp's device-0 history on
    // device 0 and mempool_mix's on device 1 (its segments, if it had any at the end, on device
    // 1). importTraceFile gives one trace per device, each exactly the import of its own file:
    // entries, final segments (with their pool ids) and stacks.
    void twoDeviceFile() {
        const std::string graphPath = dataPath("pools/cudagraph_mlp__default.pickle");
        const std::string mempoolPath = dataPath("pools/mempool_mix__default.pickle");
        const formats::Snapshot graph = formats::SnapshotReader::readFile(graphPath);
        const formats::Snapshot mempool = formats::SnapshotReader::readFile(mempoolPath);
        formats::Snapshot both = graph;
        both.device_traces = {graph.device_traces.at(0), mempool.device_traces.at(0)};
        for (formats::SnapshotSegment seg : mempool.segments) {
            seg.device = 1;
            both.segments.push_back(std::move(seg));
        }
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("two_devices.pickle").toStdString();
        formats::PickleWriter::writeFile(both, path);

        const std::vector<alloc::RecordedTrace> traces = storage::importTraceFile(path);
        QCOMPARE(traces.size(), std::size_t{2});
        const alloc::RecordedTrace alone[2] = {storage::importTraceFile(graphPath).front(),
                                               storage::importTraceFile(mempoolPath).front()};
        for (std::size_t d = 0; d < 2; ++d) {
            const alloc::RecordedTrace& t = traces[d];
            QCOMPARE(t.device, static_cast<std::int64_t>(d));
            QCOMPARE(t.origin, "snapshot device " + std::to_string(d));
            QVERIFY(sameEntries(t, alone[d]));
            QCOMPARE(t.stacks.size(), alone[d].stacks.size());
            for (std::size_t i = 0; i < t.entries.size(); ++i) {
                QCOMPARE(t.stacks.stack(t.entries[i].stackId), alone[d].stacks.stack(alone[d].entries[i].stackId));
            }
            QVERIFY(t.finalSegments.has_value());
            QCOMPARE(t.finalSegments->size(), alone[d].finalSegments->size());
            for (std::size_t i = 0; i < t.finalSegments->size(); ++i) {
                const alloc::SegmentInfo& a = (*t.finalSegments)[i];
                const alloc::SegmentInfo& b = (*alone[d].finalSegments)[i];
                QCOMPARE(a.address, b.address);
                QCOMPARE(a.totalSize, b.totalSize);
                QCOMPARE(a.poolId, b.poolId);
                QCOMPARE(a.isExpandable, b.isExpandable);
                QCOMPARE(a.blocks.size(), b.blocks.size());
            }
        }
        QCOMPARE(traces[0].entries.size(), std::size_t{255});
        QCOMPARE(traces[0].finalSegments->size(), std::size_t{14});
        std::size_t graphPool = 0;
        for (const alloc::SegmentInfo& seg : *traces[0].finalSegments) graphPool += seg.poolId == alloc::PoolId{1, 0};
        QCOMPARE(graphPool, std::size_t{3});
        QCOMPARE(traces[1].entries.size(), std::size_t{220});
        QVERIFY(traces[1].finalSegments->empty());  // mempool_mix ends with empty_cache()
    }

    // The shared train_gpt trace carries 20 record_function markers: they become Phase ops.
    void phasesOfRealTrace() {
        const QString path = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/traces/train_gpt__default.pickle";
        const auto traces = storage::importTraceFile(path.toStdString());
        QCOMPARE(traces.size(), std::size_t{1});
        QCOMPARE(traces.front().phases.size(), std::size_t{20});
        std::size_t begins = 0;
        for (const alloc::PhaseMark& m : traces.front().phases) begins += m.begin;
        QCOMPARE(begins, std::size_t{10});
        // The replay turns them into Phase ops of the program, named by their labels.
        alloc::ReplayOptions options;
        const alloc::ReplayResult r = alloc::TraceReplayer::replay(traces.front(), options);
        std::size_t phases = 0;
        for (const alloc::Op& op : r.program.ops) phases += op.kind == alloc::OpKind::Phase;
        QCOMPARE(phases, std::size_t{20});
        QVERIFY(std::find(r.program.labels.begin(), r.program.labels.end(), "Optimizer.step#AdamW.step") !=
                r.program.labels.end());
    }
};

QTEST_GUILESS_MAIN(TestTraceImport)
#include "TestTraceImport.moc"
