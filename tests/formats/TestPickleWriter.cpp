// PickleWriter: our reader reads back exactly what was written, and Python's pickle.load reads
// it as the same object PyTorch wrote (checked with python3 when it is installed).
#include <QtTest>

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <limits>
#include <optional>

#include "storage/formats/FormatError.h"
#include "storage/formats/PickleReader.h"
#include "storage/formats/PickleWriter.h"
#include "storage/formats/SnapshotReader.h"
#include "tests/formats/FormatsTestData.h"

using namespace allocscope::formats;

namespace {

// Real PyTorch 2.11 snapshots, relative to the test data: traces/ and the private-pool and
// recording-mode ones of pools/ (compiled programs with unknown lines, C++ stacks, ...).
const char* const kTraces[] = {
    "traces/frag101__default", "traces/frag101__expandable", "traces/frag101__gc06_msplit256",
    "traces/frag101__msplit128", "traces/frag101__rup4", "traces/kv_growth_limited__default",
    "traces/kv_growth_limited__expandable", "traces/train_gpt__default", "traces/train_gpt__expandable",
    "traces/train_gpt__gc06_msplit256", "traces/train_gpt__msplit128", "traces/train_gpt__rup4",
    "pools/compile_reduce_overhead__default", "pools/compile_reduce_overhead__expandable",
    "pools/cppstacks_train__default", "pools/cudagraph_mlp__default", "pools/cudagraph_mlp__expandable",
    "pools/mempool_mix__default", "pools/mempool_mix__expandable", "pools/ringbuf_train__default",
    "pools/ringbuf_train__expandable", "pools/stateonly_train__default",
};

// A snapshot with every edge the format allows: 64-bit extremes, negative int64s, long and
// non-ASCII strings, optional keys present and absent, many distinct strings (LONG_BINGET).
Snapshot edgeSnapshot() {
    Snapshot s;
    SnapshotSegment seg;
    seg.device = -1;
    seg.address = std::numeric_limits<uint64_t>::max() - 4095;
    seg.total_size = 4096;
    seg.stream = std::numeric_limits<uint64_t>::max();  // -1 as int64
    seg.segment_type = "small";
    seg.segment_pool_id = {std::numeric_limits<uint64_t>::max(), 7};
    seg.is_expandable = true;
    seg.frames = {{std::string(300, 'f'), std::numeric_limits<int64_t>::min(), "caf\xc3\xa9"}};
    seg.blocks = {{seg.address, 4096, 4000, "active_pending_free", {}}};
    s.segments.push_back(seg);
    s.device_traces.resize(3);
    for (int i = 0; i < 600; ++i) {
        TraceEntry e;
        e.action = "alloc";
        e.addr = uint64_t(1) << 63 | static_cast<uint64_t>(i);
        e.has_addr = true;
        e.size = static_cast<uint64_t>(i) * 0x10000001ull;
        e.time_us = -static_cast<int64_t>(i) * 0x100000000ll;
        e.user_metadata = "meta" + std::to_string(i);  // 600 distinct strings: memo indices > 255
        e.frames = {{"f.py", i, "fn" + std::to_string(i % 7)}};
        s.device_traces[2].push_back(e);
    }
    // Unknown informative values (TorchDynamo's 2**64-1 line, a time that did not fit int64).
    s.device_traces[2][1].frames = {{"dynamo.py", std::nullopt, "init_gpu_context"}, {"f.py", -3, "neg"}};
    s.device_traces[2][2].time_us = 0;
    s.device_traces[2][2].time_us_unknown = true;
    TraceEntry oom;
    oom.action = "oom";
    oom.device_free = 123;
    oom.has_device_free = true;
    oom.pool_id = {1, 2};
    oom.has_pool_id = true;
    s.device_traces[2].push_back(oom);
    s.allocator_settings.present = true;
    s.allocator_settings.conf = "expandable_segments:True";
    s.allocator_settings.max_split_size = -1;
    s.allocator_settings.garbage_collection_threshold = 0.6;
    s.allocator_settings.max_round_threshold = 0;
    s.allocator_settings.roundup_present = true;
    s.allocator_settings.roundup_power2_divisions = {{1, 4}, {32768, 8}};
    s.external_annotations = {{"ProfilerStep#3", "START", 0, 1795317740958031}, {"?", "END", std::nullopt, std::nullopt}};
    return s;
}

bool havePython(QString& python) {
    python = QStandardPaths::findExecutable("python3");
    return !python.isEmpty();
}

// Runs python3 -c script args...; returns its exit code (stdout/stderr shown on failure).
int runPython(const QString& python, const char* script, const QStringList& args, QByteArray* output = nullptr) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(python, QStringList{"-c", QString::fromUtf8(script)} + args);
    if (!p.waitForFinished(120000)) return -1;
    const QByteArray out = p.readAll();
    if (output) *output = out;
    if (p.exitCode() != 0) qWarning("python3 said: %s", out.constData());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

}  // namespace

class TestPickleWriter : public QObject {
    Q_OBJECT

private slots:
    void roundTripsRealSnapshots();
    void roundTripsEdgeValues();
    void outputIsStableAndSharesStrings();
    void pythonLoadsWhatPyTorchWrote();
    void pythonReadsEdgeValues();
    void writeFileReportsFailure();
};

void TestPickleWriter::roundTripsRealSnapshots() {
    for (const char* name : kTraces) {
        const Snapshot original = SnapshotReader::readFile(formats_test::dataPath(QString("%1.pickle").arg(name)));
        const std::string bytes = PickleWriter::write(original);
        QCOMPARE(static_cast<unsigned char>(bytes[0]), static_cast<unsigned char>(0x80));
        QCOMPARE(static_cast<int>(bytes[1]), 4);  // protocol 4, for memory_viz
        QVERIFY2(SnapshotReader::read(bytes) == original, name);
    }
}

void TestPickleWriter::roundTripsEdgeValues() {
    const Snapshot s = edgeSnapshot();
    const Snapshot back = SnapshotReader::read(PickleWriter::write(s));
    QCOMPARE(back.segments[0].address, s.segments[0].address);
    QCOMPARE(back.segments[0].stream, std::numeric_limits<uint64_t>::max());
    QCOMPARE(back.segments[0].frames[0].line, std::optional<int64_t>(std::numeric_limits<int64_t>::min()));
    QCOMPARE(back.device_traces[2][599].user_metadata, std::string("meta599"));
    QCOMPARE(back.device_traces[2][599].time_us, int64_t(-599) * 0x100000000ll);
    QCOMPARE(back.device_traces[2][1].frames[0].line, std::optional<int64_t>());
    QCOMPARE(back.device_traces[2][1].frames[1].line, std::optional<int64_t>(-3));
    QVERIFY(back.device_traces[2][2].time_us_unknown);
    QVERIFY(!back.device_traces[2][3].time_us_unknown);
    QVERIFY(!back.external_annotations[1].device && !back.external_annotations[1].time_us);
    QVERIFY(!back.device_traces[2].back().has_addr);
    QVERIFY(back.device_traces[0].empty());
    QVERIFY(!back.allocator_settings.expandable_segments.has_value());
    QVERIFY(back == s);
    // An empty snapshot too.
    QVERIFY(SnapshotReader::read(PickleWriter::write(Snapshot{})) == Snapshot{});
}

void TestPickleWriter::outputIsStableAndSharesStrings() {
    const Snapshot s = SnapshotReader::readFile(formats_test::dataPath("traces/train_gpt__default.pickle"));
    const std::string once = PickleWriter::write(s);
    QCOMPARE(PickleWriter::write(SnapshotReader::read(once)), once);
    // Keys and stacks are memoised like PyTorch's own output, so the file is no larger than the
    // original (712,012 bytes).
    QVERIFY2(once.size() < 712012, qPrintable(QString::number(once.size())));
}

void TestPickleWriter::pythonLoadsWhatPyTorchWrote() {
    QString python;
    if (!havePython(python)) QSKIP("python3 not installed");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QStringList args;
    for (const char* name : kTraces) {
        const QString original = QString::fromStdString(formats_test::dataPath(QString("%1.pickle").arg(name)));
        const QString ours = dir.filePath(QString("%1.pickle").arg(QString(name).section('/', 1)));
        PickleWriter::writeFile(SnapshotReader::readFile(original.toStdString()), ours.toStdString());
        args << original << ours;
    }
    // Python's loader is the reference: our file must load and equal what PyTorch wrote.
    const char* script =
        "import pickle,sys\n"
        "a=sys.argv[1:]\n"
        "for o,w in zip(a[0::2],a[1::2]):\n"
        "    x=pickle.load(open(o,'rb')); y=pickle.load(open(w,'rb'))\n"
        "    assert x==y, w\n"
        "print('ok', len(a)//2)\n";
    QByteArray out;
    QCOMPARE(runPython(python, script, args, &out), 0);
    QCOMPARE(out.trimmed(), QByteArray("ok 22"));
}

void TestPickleWriter::pythonReadsEdgeValues() {
    QString python;
    if (!havePython(python)) QSKIP("python3 not installed");
    QTemporaryDir dir;
    const QString path = dir.filePath("edge.pickle");
    PickleWriter::writeFile(edgeSnapshot(), path.toStdString());
    const char* script =
        "import pickle,sys\n"
        "s=pickle.load(open(sys.argv[1],'rb'))\n"
        "g=s['segments'][0]\n"
        "assert g['address']==2**64-4096 and g['stream']==-1 and g['device']==-1, g\n"
        "assert g['segment_pool_id']==(2**64-1,7) and g['is_expandable'] is True\n"
        "assert g['frames'][0]=={'filename':'f'*300,'line':-2**63,'name':'caf\\u00e9'}\n"
        "assert g['blocks'][0]['state']=='active_pending_free'\n"
        "t=s['device_traces']\n"
        "assert [len(d) for d in t]==[0,0,601]\n"
        "e=t[2][599]\n"
        "assert e['addr']==2**63+599 and e['size']==599*0x10000001 and e['time_us']==-599*2**32, e\n"
        "assert e['user_metadata']=='meta599' and e['frames']==[{'filename':'f.py','line':599,'name':'fn4'}]\n"
        "assert t[2][1]['frames']==[{'filename':'dynamo.py','line':2**64-1,'name':'init_gpu_context'},"
        "{'filename':'f.py','line':-3,'name':'neg'}], t[2][1]\n"
        "assert t[2][2]['time_us']==2**64-1, t[2][2]\n"
        "o=t[2][600]\n"
        "assert 'addr' not in o and o['device_free']==123 and o['pool_id']==(1,2), o\n"
        "a=s['allocator_settings']\n"
        "assert a=={'PYTORCH_CUDA_ALLOC_CONF':'expandable_segments:True','max_split_size':-1,"
        "'garbage_collection_threshold':0.6,'max_round_threshold':0,"
        "'roundup_power2_divisions':{'1':4,'32768':8}}, a\n"
        "assert s['external_annotations']==[{'stage':'START','name':'ProfilerStep#3','device':0,"
        "'time_us':1795317740958031},{'stage':'END','name':'?','device':2**64-1,'time_us':2**64-1}]\n"
        "print('ok')\n";
    QByteArray out;
    QCOMPARE(runPython(python, script, {path}, &out), 0);
    QCOMPARE(out.trimmed(), QByteArray("ok"));
}

void TestPickleWriter::writeFileReportsFailure() {
    bool thrown = false;
    try {
        PickleWriter::writeFile(Snapshot{}, "no/such/dir/out.pickle");
    } catch (const FormatError& e) {
        thrown = true;
        QCOMPARE(e.location(), std::string("no/such/dir/out.pickle"));
    }
    QVERIFY(thrown);
}

QTEST_GUILESS_MAIN(TestPickleWriter)
#include "TestPickleWriter.moc"
