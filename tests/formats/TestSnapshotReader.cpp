// PyValue tree -> Snapshot: the twelve real PyTorch 2.11 snapshots with exact counts (computed
// once with python3's pickle), the JSON form, keys by presence, and error paths.
#include <QtTest>

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "storage/formats/FormatError.h"
#include "storage/formats/JsonReader.h"
#include "storage/formats/SnapshotReader.h"
#include "tests/formats/FormatsTestData.h"

using namespace allocscope::formats;

#define EXPECT_SNAPSHOT_ERROR(input, needle)                                                        \
    do {                                                                                            \
        bool thrown_ = false;                                                                       \
        try {                                                                                       \
            SnapshotReader::read(input);                                                            \
        } catch (const FormatError& e) {                                                            \
            thrown_ = true;                                                                         \
            QVERIFY2(std::string(e.what()).find(needle) != std::string::npos, e.what());            \
        }                                                                                           \
        QVERIFY2(thrown_, "expected a FormatError");                                                \
    } while (0)

// The whole message, location included: "problem (path, byte N)".
#define EXPECT_SNAPSHOT_ERROR_EXACTLY(input, message)                                               \
    do {                                                                                            \
        bool thrown_ = false;                                                                       \
        try {                                                                                       \
            SnapshotReader::read(input);                                                            \
        } catch (const FormatError& e) {                                                            \
            thrown_ = true;                                                                         \
            QCOMPARE(std::string(e.what()), std::string(message));                                  \
        }                                                                                           \
        QVERIFY2(thrown_, "expected a FormatError");                                                \
    } while (0)

namespace {

// Expected values, from python3:
//   s = pickle.load(f); dt = s["device_traces"][0]; counts of actions; sums mod 2**64.
struct Expected {
    const char* name;
    size_t segments, blocks, entries, annotations;
    size_t alloc, freeCompleted, segmentAlloc, segmentFree, segmentMap, segmentUnmap, frames;
    uint64_t sumSize, sumAddr, sumTime, sumTotalSize;
};

const Expected kExpected[] = {
    {"frag101__default", 2, 2, 560, 0, 152, 152, 53, 51, 0, 0, 1731, 6905649664ull, 78522131012063232ull, 1005377897252904987ull, 203423744ull},
    {"frag101__expandable", 2, 2, 508, 0, 152, 152, 0, 0, 51, 1, 1525, 6846929408ull, 40890737709056ull, 912021384612458868ull, 211812352ull},
    {"frag101__gc06_msplit256", 2, 2, 560, 0, 152, 152, 53, 51, 0, 0, 1731, 6905649664ull, 78545994924101632ull, 1005377917307797086ull, 203423744ull},
    {"frag101__msplit128", 2, 2, 560, 0, 152, 152, 53, 51, 0, 0, 1731, 6905649664ull, 78510556075200512ull, 1005377911212822407ull, 203423744ull},
    {"frag101__rup4", 2, 2, 660, 0, 152, 152, 103, 101, 0, 0, 2081, 6905649664ull, 92483190271377408ull, 1184909695079388145ull, 203423744ull},
    {"kv_growth_limited__default", 28, 28, 1650, 0, 480, 480, 119, 91, 0, 0, 4780, 145334730752ull, 230937069594083328ull, 2962274497099530772ull, 3036676096ull},
    {"kv_growth_limited__expandable", 1, 1, 1482, 0, 480, 480, 0, 0, 42, 0, 4276, 122333167616ull, 20292687626240ull, 2660661111085241927ull, 2663383040ull},
    {"train_gpt__default", 67, 71, 8131, 20, 2690, 2687, 67, 0, 0, 0, 26939, 142200752415ull, 1142713459185350144ull, 14597728552083060215ull, 4905238528ull},
    {"train_gpt__expandable", 2, 8, 8121, 20, 2690, 2687, 0, 0, 57, 0, 26818, 141999425823ull, 414010451010560ull, 14579775454398118265ull, 4703911936ull},
    {"train_gpt__gc06_msplit256", 81, 83, 8145, 20, 2690, 2687, 81, 0, 0, 0, 27000, 142452410655ull, 1140419273389307392ull, 14622863282663239949ull, 5156896768ull},
    {"train_gpt__msplit128", 81, 83, 8145, 20, 2690, 2687, 81, 0, 0, 0, 27000, 142452410655ull, 1142329884524213760ull, 14622863173208375893ull, 5156896768ull},
    {"train_gpt__rup4", 70, 74, 8134, 20, 2690, 2687, 70, 0, 0, 0, 26969, 142330775839ull, 1135836469919664128ull, 14603114869740270679ull, 5035261952ull},
};

// The private-pool and recording-mode traces of PyTorch 2.11 (tests/data/pools), from python3:
//   segments, blocks, entries of device_traces[0], annotations, segments whose segment_pool_id is
//   not (0, 0), segments with is_expandable, frames of the entries, entry frames whose line is
//   >= 2**63 (TorchDynamo's unknown).
struct PoolExpected {
    const char* name;
    size_t segments, blocks, entries, annotations, privateSegments, expandableSegments, frames, unknownLines;
};

const PoolExpected kPoolExpected[] = {
    {"compile_reduce_overhead__default", 8, 12, 248, 0, 4, 0, 8286, 2},
    {"compile_reduce_overhead__expandable", 5, 11, 241, 0, 2, 5, 8012, 2},
    {"cppstacks_train__default", 68, 70, 4247, 32, 0, 0, 129829, 0},
    {"cudagraph_mlp__default", 14, 16, 255, 0, 3, 0, 921, 0},
    {"cudagraph_mlp__expandable", 7, 13, 254, 0, 2, 7, 918, 0},
    {"mempool_mix__default", 0, 0, 220, 0, 0, 0, 664, 0},
    {"mempool_mix__expandable", 0, 0, 197, 0, 0, 0, 591, 0},
    {"ringbuf_train__default", 68, 70, 3000, 32, 0, 0, 9076, 0},
    {"ringbuf_train__expandable", 2, 8, 3000, 32, 0, 2, 9094, 0},
    {"stateonly_train__default", 68, 70, 1, 1, 0, 0, 2, 0},
};

// The byte where `needle` starts in `text` (for exact JSON error positions).
size_t at(const std::string& text, const std::string& needle) {
    const size_t pos = text.find(needle);
    if (pos == std::string::npos) qFatal("test input lacks %s", needle.c_str());
    return pos;
}

}  // namespace

class TestSnapshotReader : public QObject {
    Q_OBJECT

private slots:
    void realSnapshots_data();
    void realSnapshots();
    void realSnapshotSettings();
    void firstEventAndSegmentExactly();
    void jsonSampleEqualsPickle();
    void everyProtocolGivesTheSameSnapshot();
    void detectsEncoding();
    void missingOptionalKeys();
    void bareListOfSegments();
    void oomEntryHasDeviceFreeNotAddr();
    void sixtyFourBitValues();
    void keyPathInErrors();
    void notASnapshot();
    void unreadableFile();
    void equalStacksShareOneList();
    void traceStringsAreShared();
    void byteOffsetsPastLongStrings();
    void poolTraces_data();
    void poolTraces();
    void compiledProgramLinesAreUnknown();
    void informativeValuesOutOfRangeAreUnknown();
    void rangesPastTheAddressSpaceAreErrors();
    void segmentDevices();
    void cppFramesKeepNamesAndFiles();
};

void TestSnapshotReader::realSnapshots_data() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < int(std::size(kExpected)); ++i) QTest::newRow(kExpected[i].name) << i;
}

void TestSnapshotReader::realSnapshots() {
    QFETCH(int, index);
    const Expected& x = kExpected[index];
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath(QString("traces/%1.pickle").arg(x.name)));
    QCOMPARE(s.segments.size(), x.segments);
    size_t blocks = 0;
    uint64_t total = 0;
    for (const SnapshotSegment& seg : s.segments) {
        blocks += seg.blocks.size();
        total += seg.total_size;
        // Blocks tile their segment.
        uint64_t sum = 0;
        for (const SnapshotBlock& b : seg.blocks) sum += b.size;
        QCOMPARE(sum, seg.total_size);
    }
    QCOMPARE(blocks, x.blocks);
    QCOMPARE(total, x.sumTotalSize);
    QCOMPARE(s.device_traces.size(), size_t(1));
    const std::vector<TraceEntry>& dt = s.device_traces[0];
    QCOMPARE(dt.size(), x.entries);
    QCOMPARE(s.external_annotations.size(), x.annotations);
    size_t alloc = 0, freeCompleted = 0, segAlloc = 0, segFree = 0, segMap = 0, segUnmap = 0, frames = 0;
    uint64_t sumSize = 0, sumAddr = 0, sumTime = 0;
    for (const TraceEntry& e : dt) {
        alloc += e.action == "alloc";
        freeCompleted += e.action == "free_completed";
        segAlloc += e.action == "segment_alloc";
        segFree += e.action == "segment_free";
        segMap += e.action == "segment_map";
        segUnmap += e.action == "segment_unmap";
        frames += e.frames.size();
        sumSize += e.size;
        sumAddr += e.addr;
        sumTime += static_cast<uint64_t>(e.time_us);
        QVERIFY(e.has_addr);
        QCOMPARE(e.compile_context, std::string("N/A"));
    }
    QCOMPARE(alloc, x.alloc);
    QCOMPARE(freeCompleted, x.freeCompleted);
    QCOMPARE(segAlloc, x.segmentAlloc);
    QCOMPARE(segFree, x.segmentFree);
    QCOMPARE(segMap, x.segmentMap);
    QCOMPARE(segUnmap, x.segmentUnmap);
    QCOMPARE(frames, x.frames);
    QCOMPARE(sumSize, x.sumSize);
    QCOMPARE(sumAddr, x.sumAddr);
    QCOMPARE(sumTime, x.sumTime);
}

void TestSnapshotReader::realSnapshotSettings() {
    const Snapshot a = SnapshotReader::readFile(formats_test::dataPath("traces/frag101__gc06_msplit256.pickle"));
    const AllocatorSettings& s = a.allocator_settings;
    QVERIFY(s.present);
    QCOMPARE(*s.conf, std::string("garbage_collection_threshold:0.6,max_split_size_mb:256"));
    QCOMPARE(*s.max_split_size, int64_t(268435456));
    QCOMPARE(*s.garbage_collection_threshold, 0.6);
    QCOMPARE(*s.expandable_segments, false);
    QCOMPARE(*s.pinned_num_register_threads, int64_t(1));
    QCOMPARE(*s.graph_capture_record_stream_reuse, false);
    QVERIFY(!s.max_round_threshold.has_value());
    QVERIFY(s.roundup_present);
    QCOMPARE(s.roundup_power2_divisions.size(), size_t(16));
    QCOMPARE(s.roundup_power2_divisions.begin()->first, uint64_t(1));
    QCOMPARE(s.roundup_power2_divisions.rbegin()->first, uint64_t(32768));

    const Snapshot d = SnapshotReader::readFile(formats_test::dataPath("traces/frag101__default.pickle"));
    QCOMPARE(*d.allocator_settings.conf, std::string());
    QCOMPARE(*d.allocator_settings.max_split_size, int64_t(-1));  // unlimited
    const Snapshot r = SnapshotReader::readFile(formats_test::dataPath("traces/frag101__rup4.pickle"));
    for (const auto& [bucket, divisions] : r.allocator_settings.roundup_power2_divisions) QCOMPARE(divisions, uint64_t(4));
    const Snapshot e = SnapshotReader::readFile(formats_test::dataPath("traces/train_gpt__expandable.pickle"));
    QCOMPARE(*e.allocator_settings.expandable_segments, true);
    QVERIFY(e.segments[0].is_expandable);
    const Annotation& ann = e.external_annotations.front();
    QCOMPARE(ann.stage, std::string("START"));
    QCOMPARE(ann.name, std::string("Optimizer.step#AdamW.step"));
}

void TestSnapshotReader::firstEventAndSegmentExactly() {
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath("traces/frag101__default.pickle"));
    const TraceEntry& e = s.device_traces[0][0];
    QCOMPARE(e.action, std::string("segment_alloc"));
    QCOMPARE(e.addr, uint64_t(140219003174912));
    QCOMPARE(e.size, uint64_t(2097152));
    QCOMPARE(e.stream, uint64_t(0));
    QCOMPARE(e.time_us, int64_t(1795317673655681));
    QCOMPARE(e.user_metadata, std::string());
    QCOMPARE(e.frames.size(), size_t(3));
    QCOMPARE(e.frames[0], (SnapshotFrame{"tracegen.py", 71, "w_frag101"}));
    QCOMPARE(e.frames[2], (SnapshotFrame{"tracegen.py", 193, "<module>"}));
    const SnapshotSegment& g = s.segments[0];
    QCOMPARE(g.device, int64_t(0));
    QCOMPARE(g.address, uint64_t(140218367737856));
    QCOMPARE(g.total_size, uint64_t(201326592));
    QCOMPARE(g.segment_type, std::string("large"));
    QCOMPARE(g.segment_pool_id, (std::pair<uint64_t, uint64_t>{0, 0}));
    QCOMPARE(g.blocks.size(), size_t(1));
    QCOMPARE(g.blocks[0].requested_size, uint64_t(200000000));
    QCOMPARE(g.blocks[0].state, std::string("inactive"));
    QCOMPARE(s.segments[1].segment_type, std::string("small"));
}

void TestSnapshotReader::jsonSampleEqualsPickle() {
    const Snapshot fromPickle = SnapshotReader::readFile(formats_test::dataPath("traces/frag101__default.pickle"));
    const std::string json = formats_test::bytes("samples/frag101__default.snapshot.json");
    QCOMPARE(SnapshotReader::detect(json), SnapshotReader::Encoding::Json);
    const Snapshot fromJson = SnapshotReader::read(json);
    QCOMPARE(fromJson.device_traces[0].size(), size_t(560));
    QVERIFY(fromJson == fromPickle);
}

void TestSnapshotReader::everyProtocolGivesTheSameSnapshot() {
    // Protocol 2 (JIT-pickler shape: BINPUT memo, BINUNICODE) and 5 (Python 3.14's default).
    const Snapshot p4 = SnapshotReader::readFile(formats_test::dataPath("traces/frag101__default.pickle"));
    const Snapshot p2 = SnapshotReader::readFile(formats_test::dataPath("samples/frag101__default.protocol2.pickle"));
    const Snapshot p5 = SnapshotReader::readFile(formats_test::dataPath("samples/frag101__default.protocol5.pickle"));
    QCOMPARE(p2.device_traces[0].size(), size_t(560));
    QVERIFY(p2 == p4);
    QVERIFY(p5 == p4);
}

void TestSnapshotReader::detectsEncoding() {
    QCOMPARE(SnapshotReader::detect("\x80\x04}."), SnapshotReader::Encoding::Pickle);
    QCOMPARE(SnapshotReader::detect(" \n{}"), SnapshotReader::Encoding::Json);
    QCOMPARE(SnapshotReader::detect("\xEF\xBB\xBF[]"), SnapshotReader::Encoding::Json);
    QCOMPARE(SnapshotReader::detect("}"), SnapshotReader::Encoding::Pickle);  // EMPTY_DICT, not JSON
    QCOMPARE(SnapshotReader::detect(""), SnapshotReader::Encoding::Pickle);
}

void TestSnapshotReader::missingOptionalKeys() {
    // An old-style snapshot: no block addresses, no traces, no settings; blocks tile the segment.
    const Snapshot s = SnapshotReader::read(R"({"segments": [{"address": 4096, "total_size": 2048,
        "blocks": [{"size": 512, "state": "active_allocated"}, {"size": 1536, "state": "active_awaiting_free"}]}]})");
    QCOMPARE(s.segments.size(), size_t(1));
    QCOMPARE(s.segments[0].blocks[0].address, uint64_t(4096));
    QCOMPARE(s.segments[0].blocks[1].address, uint64_t(4608));
    QCOMPARE(s.segments[0].blocks[1].state, std::string("active_awaiting_free"));
    QVERIFY(s.device_traces.empty());
    QVERIFY(!s.allocator_settings.present);
    QVERIFY(!s.allocator_settings.conf.has_value());
    QVERIFY(s.external_annotations.empty());
    // Unknown keys (newer PyTorch) are ignored.
    const Snapshot t = SnapshotReader::read(R"({"segments": [], "host_segments": [1], "device_traces": [[],
        [{"action": "alloc", "addr": 1, "size": 2, "forward_frames": ["x"], "internal_metadata": {}}]]})");
    QCOMPARE(t.device_traces.size(), size_t(2));
    QVERIFY(t.device_traces[0].empty());
    QCOMPARE(t.device_traces[1][0].size, uint64_t(2));
    QVERIFY(t.device_traces[1][0].frames.empty());
}

void TestSnapshotReader::bareListOfSegments() {
    const Snapshot s = SnapshotReader::read(R"([{"address": 1024, "total_size": 512, "blocks": []}])");
    QCOMPARE(s.segments.size(), size_t(1));
    QCOMPARE(s.segments[0].address, uint64_t(1024));
}

void TestSnapshotReader::oomEntryHasDeviceFreeNotAddr() {
    const Snapshot s = SnapshotReader::read(R"({"segments": [], "device_traces": [[
        {"action": "oom", "device_free": 123456, "size": 2097152, "stream": 0, "time_us": 5,
         "pool_id": [1, 2]}]]})");
    const TraceEntry& e = s.device_traces[0][0];
    QVERIFY(!e.has_addr);
    QVERIFY(e.has_device_free);
    QCOMPARE(e.device_free, uint64_t(123456));
    QVERIFY(e.has_pool_id);
    QCOMPARE(e.pool_id, (std::pair<uint64_t, uint64_t>{1, 2}));
}

void TestSnapshotReader::sixtyFourBitValues() {
    const Snapshot s = SnapshotReader::read(R"({"segments": [{"address": 18446744073709551615, "total_size": 0,
        "stream": -1, "device": -1}], "allocator_settings": {"max_split_size": 18446744073709551615}})");
    QCOMPARE(s.segments[0].address, std::numeric_limits<uint64_t>::max());
    QCOMPARE(s.segments[0].stream, std::numeric_limits<uint64_t>::max());  // int64 -1, kept as bits
    QCOMPARE(s.segments[0].device, int64_t(-1));
    QCOMPARE(*s.allocator_settings.max_split_size, int64_t(-1));  // SIZE_MAX written unsigned
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [{"address": 1, "total_size": 1, "device": 9223372036854775808}]})",
                          "does not fit a signed 64-bit integer (segments[0].device, byte ");
}

void TestSnapshotReader::keyPathInErrors() {
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [], "device_traces": [[{"action": "alloc"}, {"action": "alloc", "size": "9"}]]})",
                          "expected an int, found a str (device_traces[0][1].size, byte 85)");
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [{"address": 1, "total_size": 2, "blocks": [{"size": 2}]}]})",
                          "missing key 'state' (segments[0].blocks[0]");
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [{"address": 1, "total_size": 2, "frames": [{"line": 1.5}]}]})",
                          "expected an int, found a float (segments[0].frames[0].line");
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [], "allocator_settings": {"roundup_power2_divisions": {"x1": 4}}})",
                          "size bucket key 'x1' is not a decimal number (allocator_settings.roundup_power2_divisions");
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [{"address": 1, "total_size": 2, "segment_pool_id": [0]}]})",
                          "expected 2 items, found 1 (segments[0].segment_pool_id");
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [], "external_annotations": [{"stage": true}]})",
                          "expected a str, found a bool (external_annotations[0].stage");
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [{"address": -5, "total_size": 2}]})", "negative value -5");
    EXPECT_SNAPSHOT_ERROR(R"({"segments": [], "device_traces": [{"action": "alloc"}]})",
                          "expected a list, found a dict (device_traces[0]");
    // Pickle byte offsets too: the wrong value's position in the file.
    EXPECT_SNAPSHOT_ERROR(formats_test::bytes("hostile/pickle/wrong_type_trace_size.pickle"),
                          "expected an int, found a str (device_traces[0][17].size, byte ");
}

void TestSnapshotReader::notASnapshot() {
    EXPECT_SNAPSHOT_ERROR(std::string("\x80\x04K*."), "top level is an int, expected a dict (a PyTorch memory snapshot) (top level, byte 2)");
    EXPECT_SNAPSHOT_ERROR(R"({"device_traces": []})", "missing key 'segments'");
    EXPECT_SNAPSHOT_ERROR("PK\x03\x04", "opcode");  // a zip (torch.save) is no pickle snapshot
}

void TestSnapshotReader::unreadableFile() {
    EXPECT_SNAPSHOT_ERROR(std::string("\x80\x04"), "no STOP");
    bool thrown = false;
    try {
        SnapshotReader::readFile("does/not/exist.pickle");
    } catch (const FormatError& e) {
        thrown = true;
        QCOMPARE(e.location(), std::string("does/not/exist.pickle"));
        QVERIFY(std::string(e.what()).find("cannot open file") != std::string::npos);
    }
    QVERIFY(thrown);
}

// A million entries share a few thousand stacks: equal frame lists must be one shared list
// (issue #5: copying them cost 690 MB for a 100 MB pickle), in a real pickle and in JSON.
void TestSnapshotReader::equalStacksShareOneList() {
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath("traces/train_gpt__default.pickle"));
    std::map<std::string, std::set<const void*>> listsByStack;  // by the stack's text
    size_t withFrames = 0;
    for (const TraceEntry& e : s.device_traces.at(0)) {
        if (e.frames.empty()) continue;
        ++withFrames;
        std::string key;
        for (const SnapshotFrame& f : e.frames) key += f.filename + '\0' + std::to_string(f.line.value()) + '\0' + f.name + '\n';
        listsByStack[key].insert(e.frames.identity());
    }
    QVERIFY(withFrames > 1000);
    QVERIFY(listsByStack.size() * 10 < withFrames);  // stacks really repeat in this trace
    for (const auto& [stack, lists] : listsByStack) QCOMPARE(lists.size(), size_t(1));

    const Snapshot j = SnapshotReader::read(R"({"segments": [], "device_traces": [[
        {"action": "alloc", "addr": 1, "size": 2, "frames": [{"filename": "a.py", "line": 3, "name": "f"}]},
        {"action": "alloc", "addr": 5, "size": 2, "frames": [{"filename": "a.py", "line": 3, "name": "f"}]},
        {"action": "alloc", "addr": 9, "size": 2, "frames": [{"filename": "a.py", "line": 4, "name": "f"}]}]]})");
    const std::vector<TraceEntry>& t = j.device_traces.at(0);
    QVERIFY(t[0].frames.sharesWith(t[1].frames));
    QVERIFY(!t[0].frames.sharesWith(t[2].frames));
    QCOMPARE(t[2].frames[0], (SnapshotFrame{"a.py", 4, "f"}));
    // Equality is by contents, however the lists were made.
    TraceEntry copy = t[0];
    copy.frames = std::vector<SnapshotFrame>{{"a.py", 3, "f"}};
    QVERIFY(!copy.frames.sharesWith(t[0].frames));
    QVERIFY(copy == t[0]);
    copy.frames = std::vector<SnapshotFrame>{{"a.py", 3, "g"}};
    QVERIFY(!(copy == t[0]));
}

void TestSnapshotReader::traceStringsAreShared() {
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath("traces/train_gpt__default.pickle"));
    std::map<std::string, std::set<const std::string*>> textsByAction;
    for (const TraceEntry& e : s.device_traces.at(0)) textsByAction[e.action.str()].insert(&e.action.str());
    QVERIFY(textsByAction.count("alloc") == 1);
    for (const auto& [action, texts] : textsByAction) QCOMPARE(texts.size(), size_t(1));

    const Snapshot j = SnapshotReader::read(R"({"segments": [], "device_traces": [[
        {"action": "alloc", "addr": 1, "size": 2, "compile_context": "N/A", "user_metadata": ""},
        {"action": "alloc", "addr": 5, "size": 2, "compile_context": "N/A", "user_metadata": "m"},
        {"action": "free_requested", "addr": 1, "size": 2, "compile_context": "N/A"}]]})");
    const std::vector<TraceEntry>& t = j.device_traces.at(0);
    QVERIFY(t[0].action.sharesWith(t[1].action));
    QVERIFY(t[0].compile_context.sharesWith(t[2].compile_context));
    QCOMPARE(t[2].action.str(), std::string("free_requested"));
    QVERIFY(t[0].user_metadata.empty());
    QCOMPARE(t[1].user_metadata.str(), std::string("m"));
    QVERIFY(t[0].user_metadata == t[2].user_metadata);  // "" and absent read the same
    // Equality is by contents, however the strings were made.
    TraceEntry copy = t[0];
    copy.action = std::string("alloc");
    QVERIFY(!copy.action.sharesWith(t[0].action));
    QVERIFY(copy == t[0]);
    copy.action = "free_completed";
    QVERIFY(!(copy == t[0]));
    QVERIFY(copy.action == "free_completed");
    QCOMPARE(t[0].action.str(), std::string("alloc"));  // assigning a copy never changes the original
}

// Values after long strings (more than 64 KiB apart) still report their exact byte.
void TestSnapshotReader::byteOffsetsPastLongStrings() {
    const std::string longName(200000, 'x');
    const std::string head = R"({"segments": [], "device_traces": [[{"action": "alloc", "user_metadata": ")" + longName +
                             R"(", "size": )";
    EXPECT_SNAPSHOT_ERROR(head + R"("9"}]]})", "(device_traces[0][0].size, byte " + std::to_string(head.size()) + ")");
    // Many values in between, some before and some after the long string.
    std::string many = R"({"segments": [], "device_traces": [[)";
    for (int i = 0; i < 700; ++i) many += R"({"action": "alloc", "addr": 1, "size": 2},)";
    many += R"({"action": "alloc", "user_metadata": ")" + longName + R"("},)";
    for (int i = 0; i < 300; ++i) many += R"({"action": "alloc", "addr": 1, "size": 2},)";
    const size_t at = many.size() + std::string(R"({"action": "alloc", "size": )").size();
    many += R"({"action": "alloc", "size": -1}]]})";
    EXPECT_SNAPSHOT_ERROR(many, "(device_traces[0][1001].size, byte " + std::to_string(at) + ")");
}

void TestSnapshotReader::poolTraces_data() {
    QTest::addColumn<int>("index");
    for (int i = 0; i < int(std::size(kPoolExpected)); ++i) QTest::newRow(kPoolExpected[i].name) << i;
}

// Every snapshot of tests/data/pools reads, with PyTorch 2.11's newer fields: segment_pool_id,
// is_expandable, compile_context and user_metadata (PyTorch writes "N/A" and "" when unused).
void TestSnapshotReader::poolTraces() {
    QFETCH(int, index);
    const PoolExpected& x = kPoolExpected[index];
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath(QString("pools/%1.pickle").arg(x.name)));
    QCOMPARE(s.segments.size(), x.segments);
    size_t blocks = 0, privateSegments = 0, expandable = 0;
    for (const SnapshotSegment& seg : s.segments) {
        blocks += seg.blocks.size();
        privateSegments += seg.segment_pool_id != std::pair<uint64_t, uint64_t>{0, 0};
        expandable += seg.is_expandable;
        QCOMPARE(seg.device, int64_t(0));
    }
    QCOMPARE(blocks, x.blocks);
    QCOMPARE(privateSegments, x.privateSegments);
    QCOMPARE(expandable, x.expandableSegments);
    QCOMPARE(s.device_traces.size(), size_t(1));
    QCOMPARE(s.device_traces[0].size(), x.entries);
    QCOMPARE(s.external_annotations.size(), x.annotations);
    size_t frames = 0, unknown = 0;
    for (const TraceEntry& e : s.device_traces[0]) {
        frames += e.frames.size();
        for (const SnapshotFrame& f : e.frames) unknown += !f.line.has_value();
        QCOMPARE(e.compile_context.str(), std::string("N/A"));
        QVERIFY(e.user_metadata.empty());
        QVERIFY(!e.time_us_unknown);
        QVERIFY(e.time_us > 1795000000000000);
    }
    QCOMPARE(frames, x.frames);
    QCOMPARE(unknown, x.unknownLines);
}

// torch.compile(mode="reduce-overhead"): TorchDynamo's frames carry line 2**64-1. The file reads;
// those lines (and only those) are unknown; the private pool (0, 1) of CUDA graph trees is read.
void TestSnapshotReader::compiledProgramLinesAreUnknown() {
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath("pools/compile_reduce_overhead__default.pickle"));
    const std::string fakeTensor = "/opt/torch/.venv/lib/python3.12/site-packages/torch/_subclasses/fake_tensor.py";
    const std::vector<TraceEntry>& dt = s.device_traces.at(0);
    for (const size_t i : {size_t(9), size_t(10)}) {
        QCOMPARE(dt[i].frames.size(), size_t(74));
        QCOMPARE(dt[i].frames[0], (SnapshotFrame{fakeTensor, std::nullopt, "init_gpu_context"}));
        QCOMPARE(dt[i].frames[1], (SnapshotFrame{fakeTensor, 777, "__new__"}));
        QCOMPARE(dt[i].frames.back(), (SnapshotFrame{"tracegen4.py", 101, "<module>"}));
    }
    QCOMPARE(s.segments[0].segment_pool_id, (std::pair<uint64_t, uint64_t>{0, 1}));
    QCOMPARE(s.segments[2].segment_pool_id, (std::pair<uint64_t, uint64_t>{0, 0}));
    QCOMPARE(s.segments[0].segment_type, std::string("small"));
    // The same value in JSON, where it is a plain decimal.
    const Snapshot j = SnapshotReader::read(R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096,
        "size": 512, "frames": [{"filename": "fake_tensor.py", "line": 18446744073709551615, "name": "init_gpu_context"}]}]]})");
    QCOMPARE(j.device_traces[0][0].frames[0], (SnapshotFrame{"fake_tensor.py", std::nullopt, "init_gpu_context"}));
}

// Lines, times and annotation devices are informative: a value that does not fit int64 is
// unknown, a negative one is kept, and a value of the wrong type is still an error.
void TestSnapshotReader::informativeValuesOutOfRangeAreUnknown() {
    const Snapshot s = SnapshotReader::read(R"({"segments": [], "device_traces": [[
        {"action": "alloc", "addr": 4096, "size": 512, "time_us": 18446744073709551615, "frames": [
            {"filename": "a.py", "line": 9223372036854775808, "name": "f"},
            {"filename": "a.py", "line": -7, "name": "g"},
            {"filename": "a.py", "line": 9223372036854775807, "name": "h"},
            {"filename": "a.py", "name": "no_line"}]},
        {"action": "free_requested", "addr": 4096, "size": 512, "time_us": -3}]],
        "external_annotations": [{"name": "step", "stage": "START", "device": 9223372036854775808,
                                  "time_us": 18446744073709551615},
                                 {"name": "step", "stage": "END", "device": -1, "time_us": -2}]})");
    const TraceEntry& a = s.device_traces[0][0];
    QVERIFY(a.time_us_unknown);
    QCOMPARE(a.time_us, int64_t(0));
    QCOMPARE(a.frames[0].line, std::optional<int64_t>());
    QCOMPARE(a.frames[1].line, std::optional<int64_t>(-7));
    QCOMPARE(a.frames[2].line, std::optional<int64_t>(std::numeric_limits<int64_t>::max()));
    QCOMPARE(a.frames[3].line, std::optional<int64_t>(0));  // absent: 0, as before
    QVERIFY(!s.device_traces[0][1].time_us_unknown);
    QCOMPARE(s.device_traces[0][1].time_us, int64_t(-3));
    QCOMPARE(s.external_annotations[0].device, std::optional<int64_t>());
    QCOMPARE(s.external_annotations[0].time_us, std::optional<int64_t>());
    QCOMPARE(s.external_annotations[1].device, std::optional<int64_t>(-1));
    QCOMPARE(s.external_annotations[1].time_us, std::optional<int64_t>(-2));
    // Wrong types stay errors, at their byte.
    const std::string badLine = R"({"segments": [], "device_traces": [[{"action": "alloc", "frames": [{"line": "7"}]}]]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(badLine, "expected an int, found a str (device_traces[0][0].frames[0].line, byte " +
                                               std::to_string(at(badLine, "\"7\"")) + ")");
    const std::string badTime = R"({"segments": [], "external_annotations": [{"time_us": 1.5}]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(badTime, "expected an int, found a float (external_annotations[0].time_us, byte " +
                                               std::to_string(at(badTime, "1.5")) + ")");
}

// A 2**64-1 where the replay needs the value (an address or size) still makes the file bad, with
// the exact byte of the absurd value; a range ending exactly at 2**64 is fine.
void TestSnapshotReader::rangesPastTheAddressSpaceAreErrors() {
    const std::string addr = R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 512},
        {"action": "alloc", "addr": 18446744073709551615, "size": 512}]]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(addr, "the range at address 18446744073709551615 of 512 bytes runs past the end of the "
                                        "64-bit address space (device_traces[0][1].addr, byte " +
                                            std::to_string(at(addr, "18446744073709551615")) + ")");
    const std::string size = R"({"segments": [], "device_traces": [[{"action": "free_requested", "addr": 4096,
        "size": 18446744073709551615}]]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(size, "the range at address 4096 of 18446744073709551615 bytes runs past the end of "
                                        "the 64-bit address space (device_traces[0][0].size, byte " +
                                            std::to_string(at(size, "18446744073709551615")) + ")");
    const std::string segment = R"({"segments": [{"address": 18446744073709551615, "total_size": 2097152}]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(segment, "the range at address 18446744073709551615 of 2097152 bytes runs past the end "
                                           "of the 64-bit address space (segments[0].address, byte 26)");
    const std::string block = R"({"segments": [{"address": 4096, "total_size": 512, "blocks": [
        {"address": 4096, "size": 18446744073709551615, "state": "inactive"}]}]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(block, "the range at address 4096 of 18446744073709551615 bytes runs past the end of "
                                         "the 64-bit address space (segments[0].blocks[0].size, byte " +
                                             std::to_string(at(block, "18446744073709551615")) + ")");
    // Still fine: the last byte is 2**64-1; an oom has no address; a range of 0 bytes.
    const Snapshot ok = SnapshotReader::read(R"({"segments": [{"address": 18446744073709547520, "total_size": 4096,
        "blocks": [{"size": 4096, "state": "inactive"}]}], "device_traces": [[
        {"action": "oom", "device_free": 1, "size": 18446744073709551615},
        {"action": "snapshot", "addr": 18446744073709551615, "size": 0}]]})");
    QCOMPARE(ok.segments[0].blocks[0].address, uint64_t(18446744073709547520ull));
    QCOMPARE(ok.device_traces[0][0].size, std::numeric_limits<uint64_t>::max());
}

// A segment's device picks the run it is imported into: -1 (host memory) is read, anything below
// is an error at its byte; 2**63 does not fit int64 and stays the error it was.
void TestSnapshotReader::segmentDevices() {
    const Snapshot s = SnapshotReader::read(R"({"segments": [{"address": 4096, "total_size": 512, "device": -1},
        {"address": 8192, "total_size": 512, "device": 3}]})");
    QCOMPARE(s.segments[0].device, int64_t(-1));
    QCOMPARE(s.segments[1].device, int64_t(3));
    const std::string negative = R"({"segments": [{"address": 4096, "total_size": 512, "device": -2}]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(negative, "negative device -2 (a segment's device is a CUDA device ordinal, or -1 for "
                                            "host memory) (segments[0].device, byte " +
                                                std::to_string(at(negative, "-2")) + ")");
    const std::string huge = R"({"segments": [{"address": 4096, "total_size": 512, "device": 9223372036854775808}]})";
    EXPECT_SNAPSHOT_ERROR_EXACTLY(huge, "value 9223372036854775808 does not fit a signed 64-bit integer (segments[0].device, "
                                        "byte " + std::to_string(at(huge, "9223")) + ")");
}

// stacks="all": C++ frames (names demangled by PyTorch, file "??" or a source file, line 0) come
// before the Python frames, and keep their names and files.
void TestSnapshotReader::cppFramesKeepNamesAndFiles() {
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath("pools/cppstacks_train__default.pickle"));
    const TraceEntry& e = s.device_traces.at(0).at(5);
    QCOMPARE(e.frames.size(), size_t(50));
    QCOMPARE(e.frames[0], (SnapshotFrame{"??", 0, "torch::unwind::unwind()"}));
    QCOMPARE(e.frames[1], (SnapshotFrame{"??", 0, "torch::CapturedTraceback::gather(bool, bool, bool)"}));
    QCOMPARE(e.frames[2], (SnapshotFrame{"memory_snapshot.cpp", 0, "torch::cuda::(anonymous namespace)::gather_with_cpp()"}));
    QCOMPARE(e.frames[3], (SnapshotFrame{"CUDACachingAllocator.cpp", 0,
                                         "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned "
                                         "long, CUstream_st*)"}));
    QCOMPARE(e.frames.back(), (SnapshotFrame{"tracegen5.py", 151, "<module>"}));
    size_t cpp = 0, unknownFile = 0;
    for (const TraceEntry& t : s.device_traces[0]) {
        for (const SnapshotFrame& f : t.frames) {
            cpp += f.filename.size() > 4 && f.filename.compare(f.filename.size() - 4, 4, ".cpp") == 0;
            unknownFile += f.filename == "??";
        }
    }
    QCOMPARE(cpp, size_t(26921));
    QCOMPARE(unknownFile, size_t(77266));
}

QTEST_GUILESS_MAIN(TestSnapshotReader)
#include "TestSnapshotReader.moc"
