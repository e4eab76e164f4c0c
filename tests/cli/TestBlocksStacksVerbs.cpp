// `blocks` and `stacks` (issue 16's CLI): the live blocks at a point of a run and their bytes by
// call stack. Checked against what the snapshots themselves say, computed here from the files:
// after trace entry K the live (address, requested size) pairs follow from the entries before it;
// at the end they are the snapshot's active blocks; at the peak their bytes are PyTorch's own
// allocated_bytes.all.peak.
#include <QtTest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "storage/formats/SnapshotReader.h"
#include "tests/cli/InProcessCli.h"

using namespace allocscope;
using clitest::runInProcess;

namespace {

std::string data(const std::string& name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/" + name; }

using Pairs = std::set<std::pair<quint64, quint64>>;  // (address, requested size)

// The blocks live just after entry K of device 0's trace: allocated and not yet completely
// freed (a free_requested block waiting for another stream is still live, as pending free).
Pairs liveAfterEntry(const formats::Snapshot& snapshot, std::size_t k) {
    std::map<quint64, quint64> live;
    const auto& entries = snapshot.device_traces.at(0);
    for (std::size_t i = 0; i <= k && i < entries.size(); ++i) {
        const formats::TraceEntry& e = entries[i];
        if (e.action == "alloc") live[e.addr] = e.size;
        if (e.action == "free_completed") live.erase(e.addr);
    }
    return Pairs(live.begin(), live.end());
}

Pairs activeAtEnd(const formats::Snapshot& snapshot) {
    Pairs out;
    for (const formats::SnapshotSegment& seg : snapshot.segments) {
        for (const formats::SnapshotBlock& b : seg.blocks) {
            if (b.state != "inactive") out.insert({b.address, b.requested_size});
        }
    }
    return out;
}

QJsonArray blocksJson(const std::vector<std::string>& args) {
    std::vector<std::string> all{"blocks"};
    all.insert(all.end(), args.begin(), args.end());
    all.push_back("--json");
    const clitest::CliResult r = runInProcess(all);
    if (r.code != 0) qWarning("%s", r.err.c_str());
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(r.out), &error);
    if (r.code != 0 || !doc.isArray()) return {};
    return doc.array();
}

Pairs pairsOf(const QJsonArray& blocks) {
    Pairs out;
    for (const QJsonValue& v : blocks) {
        const QJsonObject o = v.toObject();
        out.insert({static_cast<quint64>(o["address"].toDouble()), static_cast<quint64>(o["requested_size"].toDouble())});
    }
    return out;
}

qint64 allocatedBytes(const QJsonArray& blocks) {
    qint64 sum = 0;
    for (const QJsonValue& v : blocks) {
        if (v.toObject()["state"].toString() == "active_allocated") sum += static_cast<qint64>(v.toObject()["size"].toDouble());
    }
    return sum;
}

qint64 pytorchStat(const std::string& json, const char* key) {
    std::ifstream in(json);
    std::stringstream text;
    text << in.rdbuf();
    const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(text.str())).object();
    return static_cast<qint64>(root["memory_stats"].toObject()[key].toDouble());
}

bool temporarySessionsLeft() {
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
        if (entry.path().filename().string().rfind("allocscope-trace-", 0) == 0) return true;
    }
    return false;
}

}  // namespace

class TestBlocksStacksVerbs : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

    std::string imported(const std::string& trace) {
        const std::string db = dir_.filePath(QString::fromStdString(std::filesystem::path(trace).stem().string()) + ".allocscope").toStdString();
        if (!std::filesystem::exists(db)) {
            const clitest::CliResult r = runInProcess({"import", data(trace), "--db", db});
            if (r.code != 0) qWarning("%s", r.err.c_str());
        }
        return db;
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void liveBlocksFollowTheTrace_data() {
        QTest::addColumn<QString>("trace");
        // Eager training; two streams with record_stream (pending frees); a CUDA graph's private
        // pool; MemPool + use_mem_pool.
        QTest::newRow("train_gpt") << "traces/train_gpt__default.pickle";
        QTest::newRow("record_stream") << "replay/streams_record_stream.pickle";
        QTest::newRow("cuda graph") << "pools/cudagraph_mlp__default.pickle";
        QTest::newRow("mempool") << "pools/mempool_mix__default.pickle";
    }
    void liveBlocksFollowTheTrace() {
        QFETCH(QString, trace);
        const formats::Snapshot snapshot = formats::SnapshotReader::readFile(data(trace.toStdString()));
        const std::size_t n = snapshot.device_traces.at(0).size();
        const std::string db = imported(trace.toStdString());
        for (const std::size_t k : {std::size_t(0), n / 3, n / 2, n - 1}) {
            const QJsonArray blocks = blocksJson({"--db", db, "--run", "1", "--at", "entry:" + std::to_string(k)});
            QVERIFY2(!blocks.isEmpty() || liveAfterEntry(snapshot, k).empty(), qPrintable(QString("entry %1").arg(k)));
            QCOMPARE(pairsOf(blocks), liveAfterEntry(snapshot, k));
            for (const QJsonValue& v : blocks) {  // an exact import's events are its entries
                const QJsonObject o = v.toObject();
                QVERIFY(o["alloc_entry"].toInteger() <= static_cast<qint64>(k));
                QCOMPARE(o["alloc_entry"].toInteger(), o["alloc_event"].toInteger());
            }
        }
        // At the end: the snapshot's own active blocks.
        QCOMPARE(pairsOf(blocksJson({"--db", db, "--run", "1", "--at", "end"})), activeAtEnd(snapshot));
    }

    void peakIsPyTorchsPeak() {
        // The blocks allocated at the peak add up to PyTorch's allocated_bytes.all.peak.
        const QJsonArray peak = blocksJson({data("traces/train_gpt__default.pickle"), "--at", "peak"});
        QCOMPARE(allocatedBytes(peak), pytorchStat(data("traces/train_gpt__default.json"), "allocated_bytes.all.peak"));
        QVERIFY(!temporarySessionsLeft());  // the trace's temporary session is gone
    }

    void blockFieldsAreTheSnapshots() {
        // Sizes, states, pools and frames at the end match the snapshot's segments block by block.
        const std::string trace = "pools/cudagraph_mlp__default.pickle";
        const formats::Snapshot snapshot = formats::SnapshotReader::readFile(data(trace));
        std::map<quint64, std::pair<const formats::SnapshotBlock*, const formats::SnapshotSegment*>> expected;
        for (const auto& seg : snapshot.segments) {
            for (const auto& b : seg.blocks) {
                if (b.state != "inactive") expected[b.address] = {&b, &seg};
            }
        }
        const QJsonArray blocks = blocksJson({"--db", imported(trace), "--run", "1"});
        QCOMPARE(static_cast<std::size_t>(blocks.size()), expected.size());
        bool sawPrivatePool = false;
        for (const QJsonValue& v : blocks) {
            const QJsonObject o = v.toObject();
            const auto it = expected.find(static_cast<quint64>(o["address"].toDouble()));
            QVERIFY(it != expected.end());
            const auto& [block, segment] = it->second;
            QCOMPARE(static_cast<quint64>(o["size"].toDouble()), block->size);
            QCOMPARE(o["state"].toString().toStdString(), block->state);
            QCOMPARE(static_cast<quint64>(o["stream"].toDouble()), segment->stream);
            const QJsonArray pool = o["pool"].toArray();
            QCOMPARE(static_cast<quint64>(pool[0].toDouble()), segment->segment_pool_id.first);
            QCOMPARE(static_cast<quint64>(pool[1].toDouble()), segment->segment_pool_id.second);
            sawPrivatePool = sawPrivatePool || pool[0].toDouble() != 0 || pool[1].toDouble() != 0;
            QCOMPARE(static_cast<std::size_t>(o["frames"].toArray().size()), block->frames.size());
        }
        QVERIFY(sawPrivatePool);
    }

    void stacksAddUp() {
        const std::string db = imported("traces/train_gpt__default.pickle");
        const clitest::CliResult r = runInProcess({"stacks", "--db", db, "--run", "1", "--at", "peak", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(r.out)).object();
        QCOMPARE(root["bytes"].toInteger(), allocatedBytes(blocksJson({"--db", db, "--run", "1", "--at", "peak"})));
        // Every node's bytes are its children's (a stack ends at a leaf: no bytes of its own).
        std::function<void(const QJsonObject&)> check = [&](const QJsonObject& node) {
            const QJsonArray children = node["children"].toArray();
            if (children.isEmpty()) return;
            qint64 sum = 0;
            for (const QJsonValue& c : children) {
                sum += c.toObject()["bytes"].toInteger();
                check(c.toObject());
            }
            QVERIFY(sum <= node["bytes"].toInteger());
        };
        check(root);
        // The outermost frames of the user's script are children of the root, caller to callee.
        bool sawModule = false;
        for (const QJsonValue& c : root["children"].toArray()) sawModule = sawModule || c.toObject()["label"].toString().startsWith("<module>");
        QVERIFY(sawModule);
    }

    void stacksDiffBetweenTwoPoints() {
        const std::string db = imported("traces/train_gpt__default.pickle");
        const clitest::CliResult r =
            runInProcess({"stacks", "--db", db, "--run", "1", "--at", "entry:100", "--diff", "--at", "peak", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(r.out)).object();
        const qint64 before = allocatedBytes(blocksJson({"--db", db, "--run", "1", "--at", "entry:100"}));
        const qint64 after = allocatedBytes(blocksJson({"--db", db, "--run", "1", "--at", "peak"}));
        QCOMPARE(root["bytes_before"].toInteger(), before);
        QCOMPARE(root["bytes_after"].toInteger(), after);
        QCOMPARE(root["delta_bytes"].toInteger(), after - before);
        // Text: the change comes first, unchanged stacks are left out.
        const clitest::CliResult text = runInProcess({"stacks", "--db", db, "--run", "1", "--at", "entry:100", "--diff", "--at", "peak"});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.find("vs run 1") != std::string::npos);
        QVERIFY(text.out.find("+3973.43 MiB") != std::string::npos);
    }

    void stacksDiffBetweenTwoRuns() {
        // The same point of two runs: train_gpt recorded under two configs.
        const std::string db = dir_.filePath("two.allocscope").toStdString();
        QCOMPARE(runInProcess({"import", data("traces/train_gpt__default.pickle"), "--db", db}).code, 0);
        QCOMPARE(runInProcess({"import", data("traces/train_gpt__expandable.pickle"), "--db", db}).code, 0);
        const clitest::CliResult r = runInProcess({"stacks", "--db", db, "--run", "1", "--at", "end", "--diff", "--run", "2", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(r.out)).object();
        QCOMPARE(root["bytes_before"].toInteger(), allocatedBytes(blocksJson({"--db", db, "--run", "1"})));
        QCOMPARE(root["bytes_after"].toInteger(), allocatedBytes(blocksJson({"--db", db, "--run", "2"})));
    }

    void truncatedHistoryMarksBlocksLiveBefore() {
        // A ring buffer that overflowed: the blocks live before the first recorded entry are
        // listed as such, and entry 0 is the first recorded event, after the restored state.
        const QJsonArray blocks = blocksJson({data("pools/ringbuf_train__default.pickle"), "--at", "entry:0"});
        QVERIFY(!blocks.isEmpty());
        int before = 0;
        for (const QJsonValue& v : blocks) {
            if (v.toObject()["live_before_history"].toBool()) {
                ++before;
                QVERIFY(v.toObject()["alloc_entry"].isNull());
            }
        }
        QVERIFY(before > 100);  // the report's 109 blocks, less any the first entry freed
    }

    void refusals_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString frag = QString::fromStdString(data("traces/frag101__default.pickle"));
        QTest::newRow("bad point") << QStringList{"blocks", frag, "--at", "middle"} << 2 << "is not a point of a run";
        QTest::newRow("bad entry") << QStringList{"blocks", frag, "--at", "entry:x"} << 2 << "entry: needs a number";
        QTest::newRow("no source") << QStringList{"blocks", "--at", "end"} << 2 << "a TRACE or --db SESSION is required";
        QTest::newRow("db without run") << QStringList{"stacks", "--db", "x.allocscope"} << 2 << "needs --run N";
        QTest::newRow("both") << QStringList{"blocks", frag, "--db", "x.allocscope", "--run", "1"} << 2 << "not both";
        QTest::newRow("diff alone") << QStringList{"stacks", frag, "--diff"} << 2 << "--diff needs --at POINT or --run M";
        QTest::newRow("missing file") << QStringList{"blocks", "/nonexistent/run.pickle"} << 1 << "run.pickle";
        QTest::newRow("past the end") << QStringList{"blocks", frag, "--at", "event:99999999"} << 1 << "past the end of run 1";
        QTest::newRow("entry past the end") << QStringList{"blocks", frag, "--at", "entry:99999999"} << 1 << "past the end of the trace";
        QTest::newRow("no such device") << QStringList{"blocks", frag, "--run", "2"} << 1 << "there is no run 2";
    }
    void refusals() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        std::vector<std::string> argv;
        for (const QString& a : args) argv.push_back(a.toStdString());
        const clitest::CliResult r = runInProcess(argv);
        QCOMPARE(r.code, code);
        QVERIFY2(QString::fromStdString(r.err).contains(message), r.err.c_str());
        QVERIFY(r.out.empty());
    }

    void entryNeedsAReplayOfTheTrace() {
        // A workload run has no trace entries; a diverged import has none after its difference.
        const std::string db = dir_.filePath("mixed.allocscope").toStdString();
        QCOMPARE(runInProcess({"run", "fragmentation-101", "--db", db}).code, 0);
        // On the whole 80 GB the recorded OOM vanishes: diverges (without --gpu the limit would be
        // inferred from that OOM and the import exact, issue 35).
        QCOMPARE(runInProcess({"import", data("replay/oom_ending.pickle"), "--db", db, "--gpu", "h100-80gb"}).code, 0);
        clitest::CliResult r = runInProcess({"blocks", "--db", db, "--run", "1", "--at", "entry:3"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("not imported from a snapshot") != std::string::npos, r.err.c_str());
        r = runInProcess({"blocks", "--db", db, "--run", "2", "--at", "entry:2"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.find("diverged from the recording") != std::string::npos, r.err.c_str());
        QCOMPARE(runInProcess({"blocks", "--db", db, "--run", "2", "--at", "entry:1"}).code, 0);  // before the difference
    }

    void snapshotWithoutFrames() {
        // An RMM log carries no stacks: every byte is "no stack recorded".
        const clitest::CliResult r = runInProcess({"stacks", data("traces/frag101__default.csv"), "--at", "peak", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonObject root = QJsonDocument::fromJson(QByteArray::fromStdString(r.out)).object();
        const QJsonArray children = root["children"].toArray();
        QCOMPARE(children.size(), 1);
        QCOMPARE(children[0].toObject()["label"].toString(), QString("no stack recorded"));
        QCOMPARE(children[0].toObject()["bytes"].toInteger(), root["bytes"].toInteger());
    }
};

QTEST_GUILESS_MAIN(TestBlocksStacksVerbs)
#include "TestBlocksStacksVerbs.moc"
