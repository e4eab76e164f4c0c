// `--db SESSION` on run / compare / recommend / replay, and `demo --db FILE`: what each records
// (names, sources, configs, GPU, fraction), the run numbers they print, OOMs as results, and the
// refusals (an existing demo file, a file that is not a session, cudaMallocAsync).
#include <QtTest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "tests/FileBytes.h"
#include "allocator/core/Event.h"
#include "allocator/core/ProgramRunner.h"
#include "app/cli/StatsJson.h"
#include "app/cli/VerbRegistry.h"
#include "tests/cli/InProcessCli.h"
#include "storage/formats/PickleWriter.h"
#include "storage/formats/SnapshotReader.h"
#include "storage/import/FrameLine.h"
#include "storage/session/SessionReader.h"

using namespace allocscope;

namespace {

using clitest::CliResult;
using clitest::runInProcess;

std::string trace(const char* name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/traces/" + name; }
std::string pools(const std::string& name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/pools/" + name; }

// Every snapshot of tests/data/pools: PyTorch 2.11 with private pools (CUDA graphs, MemPool,
// torch.compile's CUDA graph trees) and the recording modes users run into.
const char* const kPoolTraces[] = {
    "compile_reduce_overhead__default", "compile_reduce_overhead__expandable", "cppstacks_train__default",
    "cudagraph_mlp__default", "cudagraph_mlp__expandable", "mempool_mix__default", "mempool_mix__expandable",
    "ringbuf_train__default", "ringbuf_train__expandable", "stateonly_train__default",
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A verb's output together with how many programs it ran (ProgramRunner::created counts every
// run of a program through the allocator, whoever drives it).
struct CountedResult {
    CliResult result;
    std::uint64_t programRuns = 0;
};

CountedResult runCounted(const std::vector<std::string>& args) {
    const std::uint64_t before = alloc::ProgramRunner::created();
    CountedResult counted{runInProcess(args), 0};
    counted.programRuns = alloc::ProgramRunner::created() - before;
    return counted;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

std::int64_t jsonInt(const QJsonObject& object, const char* key) { return object.value(QLatin1String(key)).toInteger(-1); }

}  // namespace

class TestCliRecording : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

private slots:
    void demoCreatesTheDemoSession() {
        const std::string file = path("demo.allocscope");
        const CliResult r = runInProcess({"demo", "--db", file});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, std::string("run 1: fragmentation-101 · default\n"
                                    "run 2: fragmentation-101 · expandable_segments:True\n"
                                    "run 3: oom-with-free-memory · default\n"));
        storage::SessionReader reader(file);
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t(3));
        for (const auto& run : runs) QCOMPARE(run.status, storage::RunStatus::Complete);
        // The two fragmentation-101 runs are the same program: aligned by op index.
        QCOMPARE(runs[0].summary->opCount, runs[1].summary->opCount);
        QCOMPARE(runs[0].info.config, std::string());
        QCOMPARE(runs[1].info.config, std::string("expandable_segments:True"));
        QVERIFY(runs[1].summary->finalStats.num_device_alloc < runs[0].summary->finalStats.num_device_alloc);
        QCOMPARE(runs[2].info.gpu, std::string("24gb"));
        QCOMPARE(runs[2].summary->numOoms, std::int64_t(1));
        QVERIFY(!reader.phases(1).empty());

        // Never overwritten: the same call again is refused and the file stays as it was.
        const std::string before = testfiles::readBytes(file);
        const CliResult again = runInProcess({"demo", "--db", file});
        QCOMPARE(again.code, 1);
        QVERIFY2(contains(again.err, "already exists") && contains(again.err, file), again.err.c_str());
        QCOMPARE(testfiles::readBytes(file), before);
        QCOMPARE(runInProcess({"demo"}).code, 2);
    }

    void runRecordsOneNamedRun() {
        const std::string file = path("run.allocscope");
        const CliResult r = runInProcess({"run", "random-mix", "--param", "events=3000", "--seed", "5", "--config",
                                 "expandable_segments:True", "--memory-fraction", "0.5", "--gpu", "24gb", "--db", file});
        QCOMPARE(r.code, 0);
        QVERIFY2(contains(r.out, "run 1: random-mix · expandable_segments:True\n"), r.out.c_str());
        storage::SessionReader reader(file);
        const storage::RunRow run = reader.run(1);
        QCOMPARE(run.status, storage::RunStatus::Complete);
        QCOMPARE(run.info.sourceKind, std::string("demo"));
        QVERIFY2(contains(run.info.source, "random-mix (") && contains(run.info.source, "events=3000") &&
                     contains(run.info.source, "seed 5"),
                 run.info.source.c_str());
        QCOMPARE(run.info.config, std::string("expandable_segments:True"));
        QCOMPARE(run.info.gpu, std::string("24gb"));
        QCOMPARE(run.info.totalMemory, std::uint64_t(25393692672ull));
        QCOMPARE(run.info.memoryFraction, 0.5);
        // A second run goes into the same session as run 2.
        const CliResult second = runInProcess({"run", "fragmentation-101", "--db", file});
        QCOMPARE(second.code, 0);
        QVERIFY2(contains(second.out, "run 2: fragmentation-101 · default\n"), second.out.c_str());
    }

    void anOomIsARecordedResult() {
        const std::string file = path("oom.allocscope");
        const CliResult r = runInProcess({"run", "oom-with-free-memory", "--db", file});
        QCOMPARE(r.code, 0);
        storage::SessionReader reader(file);
        QCOMPARE(reader.run(1).summary->numOoms, std::int64_t(1));
    }

    void asyncAloneRecordsNothing() {
        const std::string file = path("async.allocscope");
        const CliResult r = runInProcess({"run", "fragmentation-101", "--config", "backend:cudaMallocAsync", "--db", file});
        QCOMPARE(r.code, 0);
        QVERIFY2(contains(r.err, "not recorded"), r.err.c_str());
        QVERIFY(!std::filesystem::exists(file));
    }

    void compareRecordsEveryNativeConfigInOrder() {
        const std::string file = path("compare.allocscope");
        const CliResult r = runInProcess({"compare", "fragmentation-101", "--config", "", "--config", "max_split_size_mb:128", "--config",
                                 "backend:cudaMallocAsync", "--config", "expandable_segments:True", "--json", "--db", file});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.rfind("{", 0) == 0);  // stdout keeps the JSON alone
        QVERIFY2(contains(r.err, "run 1: fragmentation-101 · default\nrun 2: fragmentation-101 · max_split_size_mb:128\n"
                                 "run 3: fragmentation-101 · expandable_segments:True\n"),
                 r.err.c_str());
        storage::SessionReader reader(file);
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t(3));
        QCOMPARE(runs[1].info.config, std::string("max_split_size_mb:128"));
        QCOMPARE(runs[0].summary->opCount, runs[2].summary->opCount);
    }

    // --db records the very runs the table shows: no config runs a second time for the session,
    // the output is the same as without --db, and each recorded run's summary is its row.
    void compareWithDbRunsEachConfigOnce() {
        const std::string file = path("once.allocscope");
        const std::vector<std::string> args{"compare", "llm-training", "--config", "", "--config", "expandable_segments:True",
                                            "--config", "backend:cudaMallocAsync", "--config", "max_split_size_mb:128", "--json"};
        const CountedResult plain = runCounted(args);
        QCOMPARE(plain.result.code, 0);
        QVERIFY(plain.programRuns >= 3);  // the three native configs at least
        const CountedResult recorded = runCounted(with(args, {"--db", file}));
        QCOMPARE(recorded.result.code, 0);
        QCOMPARE(recorded.programRuns, plain.programRuns);
        QCOMPARE(recorded.result.out, plain.result.out);

        const QJsonArray rows = QJsonDocument::fromJson(QByteArray::fromStdString(plain.result.out)).object().value("runs").toArray();
        QCOMPARE(rows.size(), qsizetype(4));
        storage::SessionReader reader(file);
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t(3));
        const int rowOfRun[] = {0, 1, 3};  // the async row has no run
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const QJsonObject row = rows[rowOfRun[i]].toObject();
            const storage::RunSummary& summary = *runs[i].summary;
            const std::string label = row.value("label").toString().toStdString();
            QCOMPARE(runs[i].info.config, label == "default" ? std::string() : label);
            QCOMPARE(std::int64_t(runs[i].eventCount), jsonInt(row, "events"));
            QCOMPARE(std::int64_t(summary.opCount), jsonInt(row, "ops"));
            QCOMPARE(summary.peakReserved, jsonInt(row, "peak_reserved"));
            QCOMPARE(summary.peakAllocated, jsonInt(row, "peak_allocated"));
            QCOMPARE(std::int64_t(summary.actionCounts[std::size_t(alloc::EventAction::SegmentAlloc)]), jsonInt(row, "cuda_malloc"));
            QCOMPARE(std::int64_t(summary.actionCounts[std::size_t(alloc::EventAction::SegmentFree)]), jsonInt(row, "cuda_free"));
            QCOMPARE(std::int64_t(summary.actionCounts[std::size_t(alloc::EventAction::SegmentMap)]), jsonInt(row, "map"));
            QCOMPARE(summary.finalStats.num_alloc_retries, jsonInt(row, "retries"));
            QCOMPARE(summary.finalStats.reserved_bytes[alloc::kAggregate].current, jsonInt(row, "final_reserved"));
        }
    }

    // recommend --db on a trace: the grid is measured once, and what is printed is what a run
    // without --db prints, plus the run lines.
    void recommendWithDbRunsEachConfigOnce() {
        const std::string file = path("recommend-once.allocscope");
        const std::vector<std::string> args{"recommend", trace("frag101__default.pickle"), "--no-gpu-search"};
        const CountedResult plain = runCounted(args);
        QCOMPARE(plain.result.code, 0);
        const CountedResult recorded = runCounted(with(args, {"--db", file}));
        QCOMPARE(recorded.result.code, 0);
        QCOMPARE(recorded.programRuns, plain.programRuns);
        QVERIFY2(recorded.result.out.rfind(plain.result.out, 0) == 0, recorded.result.out.c_str());
        storage::SessionReader reader(file);
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t(12));
        std::string lines;
        for (const auto& run : runs) lines += "run " + std::to_string(run.number) + ": " + run.info.name + "\n";
        QCOMPARE(recorded.result.out.substr(plain.result.out.size()), lines);
    }

    void runWithDbRunsOnce() {
        const std::string file = path("run-once.allocscope");
        const std::vector<std::string> args{"run", "llm-training", "--config", "expandable_segments:True"};
        const CountedResult plain = runCounted(args);
        const CountedResult recorded = runCounted(with(args, {"--db", file}));
        QCOMPARE(recorded.result.code, 0);
        QCOMPARE(recorded.programRuns, plain.programRuns);
        QCOMPARE(recorded.result.out, plain.result.out + "run 1: llm-training · expandable_segments:True\n");
        storage::SessionReader reader(file);
        QVERIFY2(contains(plain.result.out, ", " + std::to_string(reader.run(1).eventCount) + " allocator events\n"), plain.result.out.c_str());
    }

    // A session that cannot be opened costs nothing of the comparison: same table, then the error.
    void compareIntoANonSessionStillPrintsTheTable() {
        const std::string file = path("not-a-session.txt");
        {
            std::ofstream out(file);
            out << "my notes\n";
        }
        const std::vector<std::string> args{"compare", "fragmentation-101", "--config", "", "--config", "backend:cudaMallocAsync"};
        const CliResult plain = runInProcess(args);
        const CliResult r = runInProcess(with(args, {"--db", file}));
        QCOMPARE(r.code, 1);
        QCOMPARE(r.out, plain.out);
        QVERIFY2(contains(r.err, "is not recorded") && contains(r.err, "not an AllocScope session") && contains(r.err, file),
                 r.err.c_str());
        QCOMPARE(testfiles::readBytes(file), std::string("my notes\n"));
    }

    void compareOfATraceRecordsItsProgram() {
        const std::string file = path("compare-trace.allocscope");
        const CliResult r = runInProcess({"compare", trace("frag101__default.pickle"), "--config", "", "--db", file});
        QCOMPARE(r.code, 0);
        storage::SessionReader reader(file);
        const storage::RunRow run = reader.run(1);
        QCOMPARE(run.info.sourceKind, std::string("snapshot"));
        QCOMPARE(run.info.name, std::string("frag101__default.pickle · default"));
    }

    // The source kind comes from the file's content (storage::TraceFile), as the import and the
    // Compare tab record it, not from its name: an RMM log named .txt is a csv run.
    void traceSourceKindFollowsTheContent() {
        const std::string log = path("rmm-log.txt");
        std::filesystem::copy_file(trace("frag101__default.csv"), log);
        for (const char* verb : {"compare", "recommend"}) {
            const std::string file = path(verb == std::string("compare") ? "kind-compare.allocscope" : "kind-recommend.allocscope");
            const CliResult r = verb == std::string("compare") ? runInProcess({"compare", log, "--config", "", "--db", file})
                                                               : runInProcess({"recommend", log, "--no-gpu-search", "--db", file});
            QVERIFY2(r.code == 0, r.err.c_str());
            storage::SessionReader reader(file);
            QCOMPARE(reader.run(1).info.sourceKind, std::string("csv"));
            QCOMPARE(reader.run(1).info.name, std::string("rmm-log.txt · default"));
        }
    }

    void recommendRecordsItsGrid() {
        const std::string file = path("recommend.allocscope");
        const CliResult r = runInProcess({"recommend", "oom-with-free-memory", "--no-gpu-search", "--db", file});
        QCOMPARE(r.code, 0);
        storage::SessionReader reader(file);
        const auto runs = reader.runs();
        // expandable x max_split_size x roundup: 12 native configs (async is not recorded).
        QCOMPARE(runs.size(), std::size_t(12));
        QCOMPARE(runs[0].info.name, std::string("oom-with-free-memory · default"));
        QCOMPARE(runs[0].summary->numOoms, std::int64_t(1));
        bool expandableWithoutOom = false;
        for (const auto& run : runs) {
            QVERIFY2(contains(r.out, "run " + std::to_string(run.number) + ": " + run.info.name + "\n"), r.out.c_str());
            if (run.info.config == "expandable_segments:True") expandableWithoutOom = run.summary->numOoms == 0;
        }
        QVERIFY(expandableWithoutOom);
    }

    void replayRecordsExactAndWhatIfRuns() {
        const std::string file = path("replay.allocscope");
        const CliResult exact = runInProcess({"replay", trace("train_gpt__default.pickle"), "--db", file});
        QCOMPARE(exact.code, 0);
        QVERIFY2(contains(exact.out, "run 1: train_gpt__default.pickle\n"), exact.out.c_str());
        const CliResult whatIf = runInProcess({"replay", trace("train_gpt__default.pickle"), "--config", "expandable_segments:True",
                                      "--stats-json", "-", "--db", file});
        QCOMPARE(whatIf.code, 0);
        QVERIFY2(contains(whatIf.err, "run 2: train_gpt__default.pickle · expandable_segments:True\n"), whatIf.err.c_str());
        storage::SessionReader reader(file);
        const storage::RunRow one = reader.run(1);
        QCOMPARE(one.divergence, std::string());
        QCOMPARE(one.info.sourceKind, std::string("snapshot"));
        const storage::RunRow two = reader.run(2);
        QCOMPARE(two.info.config, std::string("expandable_segments:True"));
        // The recorded what-if is the replay that was reported.
        QVERIFY2(contains(whatIf.out, "\"reserved_bytes.all.peak\": " + std::to_string(two.summary->peakReserved)),
                 whatIf.out.substr(0, 400).c_str());
    }

    // Each pool trace opens: `replay` reads and imports it (exit 0: a replay that diverges is
    // reported, not refused) and `import --db` records it. Private pools may still diverge; a
    // file the reader or the import refused would exit 1 with "allocscope-cli: <what> (<where>)".
    void everyPoolTraceOpens_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : kPoolTraces) QTest::newRow(name) << QString(name);
    }
    void everyPoolTraceOpens() {
        QFETCH(QString, name);
        const std::string file = pools(name.toStdString() + ".pickle");
        const CliResult replay = runInProcess({"replay", file});
        QVERIFY2(replay.code == 0, replay.err.c_str());
        const std::string db = path((name.toStdString() + ".allocscope").c_str());
        const CliResult imported = runInProcess({"import", file, "--db", db});
        QVERIFY2(imported.code == 0, imported.err.c_str());
        QCOMPARE(imported.out, std::string("run 1\n"));
        storage::SessionReader reader(db);
        QCOMPARE(reader.runs().size(), std::size_t(1));
        QCOMPARE(reader.run(1).info.sourceKind, std::string("snapshot"));
    }

    // TorchDynamo's unknown line survives import -> session -> export: the exported pickle has
    // the frame with its file and name and line 2**64-1 again (read back as unknown), never the
    // session's marker (storage::FrameLine::kUnknown) as a number. Made here rather than taken
    // from compile_reduce_overhead, whose unknown lines are in the stacks of frees (a session
    // keeps the allocation's stack for a free). compile_context and user_metadata are not kept
    // by a session; the export writes PyTorch's "N/A" and "", which is what this trace had.
    void unknownLinesSurviveImportAndExport() {
        const std::uint64_t base = 0x7f0000000000;
        const formats::FrameList dynamo = std::vector<formats::SnapshotFrame>{
            {"fake_tensor.py", std::nullopt, "init_gpu_context"}, {"fake_tensor.py", 777, "__new__"}, {"train.py", -1, "step"}};
        formats::Snapshot snap;
        snap.allocator_settings.present = true;
        snap.allocator_settings.conf = "";
        const auto entry = [&](const char* action, std::uint64_t addr, std::uint64_t size, bool frames) {
            formats::TraceEntry e;
            e.action = action;
            e.addr = addr;
            e.has_addr = true;
            e.size = size;
            e.time_us = 1795559509375922 + static_cast<std::int64_t>(snap.device_traces[0].size());
            e.compile_context = "N/A";
            if (frames) e.frames = dynamo;
            snap.device_traces[0].push_back(e);
        };
        snap.device_traces.resize(1);
        entry("segment_alloc", base, 2 << 20, true);
        entry("alloc", base, 512, true);
        entry("alloc", base + 512, 1024, true);
        entry("free_requested", base, 512, true);
        entry("free_completed", base, 512, true);
        formats::SnapshotSegment seg;
        seg.address = base;
        seg.total_size = 2 << 20;
        seg.allocated_size = seg.active_size = seg.requested_size = 1024;
        seg.segment_type = "small";
        seg.frames = dynamo;
        // A freed block keeps its last requested size, as in PyTorch's snapshots.
        seg.blocks = {{base, 512, 512, "inactive", {}}, {base + 512, 1024, 1024, "active_allocated", dynamo},
                      {base + 1536, (2 << 20) - 1536, 0, "inactive", {}}};
        snap.segments = {seg};
        const std::string input = path("compiled.pickle");
        formats::PickleWriter::writeFile(snap, input);

        const std::string db = path("compiled.allocscope");
        const CliResult imported = runInProcess({"import", input, "--db", db});
        QVERIFY2(imported.code == 0 && imported.err.empty(), imported.err.c_str());  // reproduced
        const std::string out = path("compiled_export.pickle");
        const CliResult exported = runInProcess({"export", "--db", db, "--run", "1", "--pickle", out});
        QVERIFY2(exported.code == 0, exported.err.c_str());
        const formats::Snapshot back = formats::SnapshotReader::readFile(out);
        std::size_t allocs = 0;
        for (const formats::TraceEntry& e : back.device_traces.at(0)) {
            QCOMPARE(e.compile_context.str(), std::string("N/A"));
            QVERIFY(e.user_metadata.empty());
            if (e.action != "alloc") continue;
            ++allocs;
            QCOMPARE(e.frames, dynamo);  // the unknown line as unknown, -1 and 777 as they were
        }
        QCOMPARE(allocs, std::size_t(2));
        QCOMPARE(back.segments.size(), std::size_t(1));
        bool blockWithStack = false;
        for (const formats::SnapshotBlock& b : back.segments[0].blocks) blockWithStack |= b.frames == dynamo;
        QVERIFY(blockWithStack);
    }

    // replay --segments-json: each segment's pool id as the allocator reports it, and an unknown
    // line as TorchDynamo wrote it (2**64-1), so the file reads back as the same snapshot.
    void segmentsJsonKeepsPoolIdsAndUnknownLines() {
        alloc::StackTable stacks;
        const alloc::Stack dynamo = {{"fake_tensor.py", storage::FrameLine::kUnknown, "init_gpu_context"},
                                     {"train.py", -1, "step"}};
        alloc::SegmentInfo seg;
        seg.address = 0x7f0000000000;
        seg.totalSize = 2 << 20;
        seg.pool = alloc::PoolKind::Small;
        seg.poolId = alloc::PoolId{1, 0};
        seg.stackId = stacks.intern(dynamo);
        seg.blocks = {alloc::BlockInfo{}};
        seg.blocks[0].address = seg.address;
        seg.blocks[0].size = seg.totalSize;
        seg.blocks[0].state = alloc::BlockState::Inactive;
        const std::string json = cli::segmentsToJson({seg}, 0, &stacks);
        QVERIFY2(contains(json, "\"line\": 18446744073709551615, \"name\": \"init_gpu_context\""), json.c_str());
        QVERIFY2(contains(json, "\"segment_pool_id\": [1, 0]"), json.c_str());
        const formats::Snapshot back = formats::SnapshotReader::read(json);  // a bare list of segments
        QCOMPARE(back.segments.at(0).segment_pool_id, (std::pair<std::uint64_t, std::uint64_t>{1, 0}));
        QCOMPARE(back.segments[0].frames, (formats::FrameList{{"fake_tensor.py", std::nullopt, "init_gpu_context"},
                                                              {"train.py", -1, "step"}}));
    }

    void notASessionIsRefusedAndLeftAlone() {
        const std::string file = path("notes.txt");
        {
            std::ofstream out(file);
            out << "my notes, not a session\n";
        }
        const std::string before = testfiles::readBytes(file);
        const CliResult r = runInProcess({"run", "fragmentation-101", "--db", file});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.rfind("allocscope-cli: ", 0) == 0 && contains(r.err, "not an AllocScope session") && contains(r.err, file),
                 r.err.c_str());
        QCOMPARE(testfiles::readBytes(file), before);
        QCOMPARE(runInProcess({"run", "fragmentation-101", "--db"}).code, 2);
    }
};

QTEST_GUILESS_MAIN(TestCliRecording)
#include "TestCliRecording.moc"
