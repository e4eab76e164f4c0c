// liballocscope_torch.so through its C ABI, loaded with dlopen as PyTorch loads it, on the
// simulated device (CI has no GPU and no torch). The library reads its environment once per
// process, so each scenario runs in a child process of this executable (`--scenario NAME`) with
// its own environment; the parent checks what the child printed and the session it left.
#include <QtTest>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"
#include "app/cli/StatsJson.h"
#include "storage/session/RunProgress.h"
#include "storage/session/SessionReader.h"
#include "tests/FileBytes.h"
#include "tests/torch/AbiOpSequence.h"
#include "tests/torch/TorchApi.h"

using namespace allocscope;

namespace {
bool gForkedChild = false;
}  // namespace

// LeakSanitizer's documented hook: a forked child has none of its parent's threads, so what the
// writer thread owns would read as leaked there.
extern "C" int __lsan_is_turned_off() { return gForkedChild ? 1 : 0; }

namespace {

constexpr unsigned long long kTotal = 8ULL << 30;
constexpr std::size_t kOpsCompared = 20000;
constexpr std::size_t kOpsRecorded = 220000;  // about 60 batches of 4,096 events
const char* const kConfig = "max_split_size_mb:64,garbage_collection_threshold:0.6";

// Two threads of one process OOM on the same device, each with a size of its own, both at once;
// each round a thread checks that its failure's text is its own (the text names the size).
constexpr int kOomRounds = 20000;
constexpr unsigned long long kOomGiB[2] = {3, 5};  // both beyond the 1 GiB simulated device

// Rounds whose text named the other thread's size (or none), per thread: for each of
// allocscope_last_error() and the std::runtime_error of allocscope_set_oom_raises(1).
std::array<int, 2> foreignOomTexts(const testing::TorchApi& api, bool raises) {
    std::array<int, 2> foreign{0, 0};
    std::atomic<int> ready{0};
    auto run = [&](int who) {
        const std::size_t size = kOomGiB[who] << 30;
        const std::string own = "Tried to allocate " + std::to_string(kOomGiB[who]) + ".00 GiB";
        // Both threads start their rounds together, so that their OOMs overlap.
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
        for (int round = 0; round < kOomRounds; ++round) {
            std::string text;
            if (raises) {
                try {
                    api.malloc(size, 0, nullptr);
                    text = "allocated";
                } catch (const std::runtime_error& e) {
                    text = e.what();
                }
            } else {
                text = api.malloc(size, 0, nullptr) ? "allocated" : api.lastError();
            }
            if (text.find(own) == std::string::npos) ++foreign[static_cast<std::size_t>(who)];
        }
    };
    std::thread other(run, 1);
    run(0);
    other.join();
    return foreign;
}

void* pointer(std::uint64_t address) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)); }

// The ops through the C ABI, on device 0.
struct AbiTarget {
    const testing::TorchApi& api;
    std::uint64_t alloc(std::uint64_t size, std::uint64_t stream) {
        return reinterpret_cast<std::uintptr_t>(api.malloc(size, 0, pointer(stream)));
    }
    void free(std::uint64_t address) { api.free(pointer(address), 0, 0, nullptr); }
    void record(std::uint64_t address, std::uint64_t stream) { api.recordStream(pointer(address), pointer(stream)); }
    void emptyCache() { api.emptyCache(); }
    void synchronize() { api.synchronize(); }
    void fraction(double f) { api.setMemoryFraction(f, 0); }
    void resetPeak() { api.resetPeakStats(0); }
    void resetAccumulated() { api.resetAccumulatedStats(0); }
};

// The same ops on a CachingAllocator of our own: what the library must have done.
struct DirectTarget {
    alloc::SimulatedDevice device{kTotal, 0};
    alloc::CountingSink sink;
    alloc::CachingAllocator allocator;
    explicit DirectTarget(const char* config) : allocator(alloc::parseConfig(config).config, device, &sink) {}
    std::uint64_t alloc(std::uint64_t size, std::uint64_t stream) { return allocator.malloc(size, stream).value_or(0); }
    void free(std::uint64_t address) { allocator.free(address); }
    void record(std::uint64_t address, std::uint64_t stream) { allocator.recordStream(address, stream); }
    void emptyCache() { allocator.emptyCache(); }
    void synchronize() { allocator.synchronize(); }
    void fraction(double f) { allocator.setMemoryFraction(f); }
    void resetPeak() { allocator.resetPeakStats(); }
    void resetAccumulated() { allocator.resetAccumulatedStats(); }
};

// Re-reads the session until the run shows committed events (the writer commits on its own
// thread; this ends as soon as it has, without any timing).
std::uint64_t waitForCommittedEvents(const std::string& path) {
    for (;;) {
        storage::SessionReader reader(path, false);
        const auto runs = reader.runs();
        if (!runs.empty() && runs.front().eventCount > 0) return runs.front().eventCount;
        std::this_thread::yield();
    }
}

int scenario(const std::string& name) {
    const testing::TorchApi api = testing::TorchApi::load(ALLOCSCOPE_TORCH_LIB);
    if (name == "ops" || name == "record" || name == "killed" || name == "fork") {
        if (api.useSimulatedDevice(kTotal) != 0) return std::fprintf(stderr, "%s\n", api.lastError()), 2;
    }
    AbiTarget target{api};
    if (name == "ops") {
        testing::playAbiOps(target, kOpsCompared);
        std::printf("%s\n----\n%s", testing::TorchApi::text(api.statsJson, 0).c_str(),
                    testing::TorchApi::text(api.memorySummary, 0).c_str());
    } else if (name == "record") {
        testing::playAbiOps(target, kOpsRecorded / 2, 38);
        // A reader while the run is recorded: the committed batches, the run still open.
        const std::uint64_t mid = waitForCommittedEvents(api.sessionPath());
        // Closed before the writer closes: the last connection to go removes the -wal file.
        {
            storage::SessionReader midReader(api.sessionPath());
            const storage::RunRow row = midReader.runs().at(0);
            const bool open = !storage::RunProgress::read(midReader, row.number).ended;
            std::printf("mid %llu %d %d\n", static_cast<unsigned long long>(mid), open ? 1 : 0,
                        row.status == storage::RunStatus::Complete ? 1 : 0);
        }
        testing::playAbiOps(target, kOpsRecorded / 2, 39);
        if (api.finish() != 0 || api.finish() != 0) return std::fprintf(stderr, "%s\n", api.lastError()), 2;
        std::printf("session %s\n", api.sessionPath());
    } else if (name == "killed") {
        testing::playAbiOps(target, kOpsCompared);
        waitForCommittedEvents(api.sessionPath());
        std::fflush(stdout);
        _exit(0);  // as a killed process: no atexit handler, no finish
    } else if (name == "fork") {
        testing::playAbiOps(target, kOpsCompared);
        std::fflush(stdout);
        const pid_t child = fork();
        if (child == 0) {
            gForkedChild = true;
            std::exit(0);  // runs the atexit handler in a process without the writer thread
        }
        int status = 0;
        waitpid(child, &status, 0);
        if (api.finish() != 0) return std::fprintf(stderr, "%s\n", api.lastError()), 2;
        std::printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else if (name == "refused" || name == "foreign") {
        void* p = api.malloc(4096, 0, nullptr);
        std::printf("%s\n%s\n%s\n", p ? "allocated" : "null", api.lastError(), api.sessionPath());
        if (p) api.free(p, 4096, 0, nullptr);
    } else if (name == "oom") {
        void* kept = api.malloc(600ULL << 20, 0, nullptr);
        void* refused = api.malloc(700ULL << 20, 0, nullptr);
        std::printf("%s %s\n%s\n", kept ? "kept" : "null", refused ? "allocated" : "null", api.lastError());
        // Normal exit without allocscope_finish: the atexit handler ends the run.
    } else if (name == "oomraises") {
        // What PyTorch's pluggable allocator gets once the Python helper asked for exceptions.
        const int before = api.setOomRaises(1);
        void* kept = api.malloc(600ULL << 20, 0, nullptr);
        std::string what = "no exception";
        try {
            api.malloc(700ULL << 20, 0, nullptr);
        } catch (const std::runtime_error& e) {
            what = e.what();
        }
        std::printf("%d %s\n%s\n", before, kept ? "kept" : "null", what.c_str());
    } else if (name == "oomthreads") {
        const std::array<int, 2> returned = foreignOomTexts(api, false);
        api.setOomRaises(1);
        const std::array<int, 2> thrown = foreignOomTexts(api, true);
        std::printf("%d %d %d %d\n", returned[0], returned[1], thrown[0], thrown[1]);
    } else {
        return std::fprintf(stderr, "unknown scenario %s\n", name.c_str()), 2;
    }
    return 0;
}

struct ChildResult {
    int exitCode = -1;
    QString out;
    QString err;
};

ChildResult runScenario(const QString& name, const QStringList& environment) {
    QProcess child;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* var : {"ALLOCSCOPE_CUDA_ALLOC_CONF", "ALLOCSCOPE_SESSION", "ALLOCSCOPE_DEVICE", "ALLOCSCOPE_PYTHON_FRAMES"}) {
        env.remove(QString::fromLatin1(var));
    }
    for (const QString& item : environment) env.insert(item.section('=', 0, 0), item.section('=', 1));
    child.setProcessEnvironment(env);
    child.start(QCoreApplication::applicationFilePath(), {"--scenario", name});
    child.waitForFinished(-1);
    return {child.exitStatus() == QProcess::NormalExit ? child.exitCode() : -1, QString::fromUtf8(child.readAllStandardOutput()),
            QString::fromUtf8(child.readAllStandardError())};
}

}  // namespace

class TestTorchAbi : public QObject {
    Q_OBJECT

private slots:
    void statsAndSummaryEqualTheAllocatorRunDirectly() {
        const ChildResult r = runScenario("ops", {QString("ALLOCSCOPE_CUDA_ALLOC_CONF=") + kConfig});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList parts = r.out.split("\n----\n");
        QCOMPARE(parts.size(), 2);
        DirectTarget direct(kConfig);
        testing::playAbiOps(direct, kOpsCompared);
        const QJsonObject got = QJsonDocument::fromJson(parts[0].toUtf8()).object();
        const QJsonObject want = QJsonDocument::fromJson(QByteArray::fromStdString(cli::statsToJson(direct.allocator.stats()))).object();
        QCOMPARE(want.size(), 122);
        QCOMPARE(got.keys(), want.keys());
        for (const QString& key : want.keys()) QVERIFY2(got[key] == want[key], qPrintable(key));
        // The ops really exercised what they claim (a config, retries-free splits, pending frees).
        QVERIFY(want["max_split_size"].toDouble() == 64.0 * 1024 * 1024);
        QVERIFY(want["allocated_bytes.all.current"].toDouble() > 0);
        QVERIFY(want["inactive_split.all.current"].toDouble() > 0);
        QCOMPARE(parts[1], QString::fromStdString(direct.allocator.memorySummary(0)));
    }

    void aRefusedConfigAllocatesNothingAndSaysWhere() {
        const QString text = "expandable_segments:True,max_split_size_mb:abc";
        const ChildResult r = runScenario("refused", {"ALLOCSCOPE_CUDA_ALLOC_CONF=" + text});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList lines = r.out.split('\n');
        QCOMPARE(lines.value(0), QString("null"));
        const QString column = QString("at column %1").arg(text.indexOf("abc") + 1);
        QVERIFY2(lines.value(1).contains("ALLOCSCOPE_CUDA_ALLOC_CONF") && lines.value(1).contains(column), qPrintable(lines.value(1)));
        // Once on stderr, whatever the number of calls.
        QCOMPARE(r.err.count("ALLOCSCOPE_CUDA_ALLOC_CONF"), 1);
    }

    void aRecordedRunHoldsEveryEventAndEndsComplete() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("live.allocscope").toStdString();
        const ChildResult r = runScenario("record", {"ALLOCSCOPE_SESSION=" + QString::fromStdString(path)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        // Mid-run: committed events visible, the run open and not complete.
        const QStringList mid = r.out.section('\n', 0, 0).split(' ');
        QCOMPARE(mid.value(0), QString("mid"));
        QVERIFY(mid.value(1).toULongLong() > 0);
        QCOMPARE(mid.value(2), QString("1"));
        QCOMPARE(mid.value(3), QString("0"));

        DirectTarget direct("");
        testing::playAbiOps(direct, kOpsRecorded / 2, 38);
        testing::playAbiOps(direct, kOpsRecorded / 2, 39);
        QVERIFY(direct.sink.total() > 3 * 4096);

        storage::SessionReader reader(path);
        const auto runs = reader.runs();
        QCOMPARE(runs.size(), std::size_t{1});
        const storage::RunRow& run = runs.front();
        QCOMPARE(run.status, storage::RunStatus::Complete);
        QVERIFY(storage::RunProgress::read(reader, run.number).ended);
        QCOMPARE(run.eventCount, direct.sink.total());
        std::uint64_t stored = 0;
        reader.forEachChunk(run.number, 0, run.eventCount, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
            stored += events.size();
            return true;
        });
        QCOMPARE(stored, direct.sink.total());
        QVERIFY(run.summary.has_value());
        QVERIFY(run.summary->finalStats == direct.allocator.stats());
        QCOMPARE(run.info.sourceKind, std::string("live"));
        QVERIFY(run.info.source.rfind("pytorch process ", 0) == 0);
        QCOMPARE(run.info.totalMemory, std::uint64_t{kTotal});
        QVERIFY(!std::filesystem::exists(path + "-wal"));
    }

    void aKilledRecordingReadsInterrupted() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("killed.allocscope").toStdString();
        const ChildResult r = runScenario("killed", {"ALLOCSCOPE_SESSION=" + QString::fromStdString(path)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        storage::SessionReader reader(path);
        const storage::RunRow run = reader.runs().at(0);
        QCOMPARE(run.status, storage::RunStatus::Interrupted);
        QVERIFY(!storage::RunProgress::read(reader, run.number).ended);  // still says "recording"
        QVERIFY(run.eventCount > 0);
    }

    void aForkedChildLeavesTheRecordingToItsParent() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("fork.allocscope").toStdString();
        const ChildResult r = runScenario("fork", {"ALLOCSCOPE_SESSION=" + QString::fromStdString(path)});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out.trimmed(), QString("child 0"));
        DirectTarget direct("");
        testing::playAbiOps(direct, kOpsCompared);
        storage::SessionReader reader(path);
        const storage::RunRow run = reader.runs().at(0);
        QCOMPARE(run.status, storage::RunStatus::Complete);
        QCOMPARE(run.eventCount, direct.sink.total());
    }

    void aSessionPathThatIsNoSessionIsRefusedAndLeftAsItWas() {
        QTemporaryDir dir;
        const std::string bytes = "not a session, just notes\n" + std::string(5000, 'x');
        const std::string path = testfiles::writeIn(dir, "notes.db", bytes);
        const ChildResult r = runScenario("foreign", {"ALLOCSCOPE_SESSION=" + QString::fromStdString(path),
                                                      "ALLOCSCOPE_DEVICE=simulated:1073741824"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList lines = r.out.split('\n');
        QCOMPARE(lines.value(0), QString("allocated"));  // the allocator runs, unrecorded
        QCOMPARE(lines.value(2), QString());            // no session path
        QVERIFY2(r.err.contains(QString::fromStdString(path)) && r.err.contains("not recorded"), qPrintable(r.err));
        QCOMPARE(testfiles::readBytes(path), bytes);
        for (const char* side : {"-wal", "-shm", "-journal"}) QVERIFY(!std::filesystem::exists(path + side));
    }

    void pythonFramesBecomeTheAllocationsStack() {
        const QString python = QStandardPaths::findExecutable("python3");
        if (python.isEmpty()) QSKIP("no python3 on this machine");
        QTemporaryDir dir;
        const std::string path = dir.filePath("frames.allocscope").toStdString();
        // ctypes releases the GIL around the call, as PyTorch's bindings do around an op.
        const std::string script = testfiles::writeIn(dir, "probe.py",
            "import ctypes, sys\n"
            "lib = ctypes.CDLL(sys.argv[1])\n"
            "lib.allocscope_malloc.restype = ctypes.c_void_p\n"
            "lib.allocscope_malloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]\n"
            "def inner():\n"
            "    return lib.allocscope_malloc(4096, 0, None)\n"
            "def outer():\n"
            "    return inner()\n"
            "print('allocated' if outer() else 'null')\n");
        QProcess child;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("ALLOCSCOPE_PYTHON_FRAMES", "1");
        env.insert("ALLOCSCOPE_SESSION", QString::fromStdString(path));
        env.insert("ALLOCSCOPE_DEVICE", "simulated:1073741824");
#ifdef ALLOCSCOPE_TORCH_PRELOAD
        // A sanitized library in an uninstrumented python: its runtime must be loaded first.
        env.insert("LD_PRELOAD", ALLOCSCOPE_TORCH_PRELOAD);
        env.insert("ASAN_OPTIONS", "detect_leaks=0");
#endif
        child.setProcessEnvironment(env);
        child.start(python, {QString::fromStdString(script), ALLOCSCOPE_TORCH_LIB});
        child.waitForFinished(-1);
        QVERIFY2(child.exitCode() == 0, child.readAllStandardError().constData());
        QCOMPARE(child.readAllStandardOutput().trimmed(), QByteArray("allocated"));
        storage::SessionReader reader(path);
        const storage::RunRow run = reader.runs().at(0);
        QCOMPARE(run.status, storage::RunStatus::Complete);
        const storage::EventPage page = reader.events(run.number, 0, 16);
        std::uint32_t stackId = 0;
        for (const alloc::Event& e : page.events) {
            if (e.action == alloc::EventAction::Alloc) stackId = e.stackId;
        }
        const alloc::Stack stack = reader.stack(run.number, stackId);
        QVERIFY(stack.size() >= 3);
        QCOMPARE(stack[0].name, std::string("inner"));
        QCOMPARE(stack[0].line, std::int64_t{6});
        QCOMPARE(stack[0].filename, script);
        QCOMPARE(stack[1].name, std::string("outer"));
        QCOMPARE(stack[2].name, std::string("<module>"));
    }

    // PyTorch 2.11 does not check alloc_fn's result: a NULL became a tensor at address 0. With
    // allocscope_set_oom_raises(1) the OOM is a std::runtime_error carrying PyTorch's message
    // (PyTorch's bindings raise it as a RuntimeError), and the oom event is still recorded.
    void anOomRaisesWhenAsked() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("oomraises.allocscope").toStdString();
        const ChildResult r = runScenario("oomraises", {"ALLOCSCOPE_SESSION=" + QString::fromStdString(path),
                                                        "ALLOCSCOPE_DEVICE=simulated:1073741824"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList lines = r.out.split('\n');
        QCOMPARE(lines.value(0), QString("0 kept"));  // off by default
        QVERIFY2(lines.value(1).startsWith("CUDA out of memory. Tried to allocate 700.00 MiB"), qPrintable(lines.value(1)));
        storage::SessionReader reader(path);
        const storage::RunRow run = reader.runs().at(0);
        QVERIFY(run.summary.has_value());
        QCOMPARE(run.summary->numOoms, std::int64_t{1});
    }

    // Each thread's failed malloc leaves its own text: the message is taken under the lock of the
    // failure itself. When it was read in a second locked call, another thread's OOM in between
    // replaced it: the library gives no hook inside that gap, so no fixed interleaving can show
    // it, but 20,000 overlapping rounds per thread counted 30 to 900 foreign texts per counter
    // in every run on two cores before the fix.
    void eachThreadsOomTextIsItsOwn() {
        const ChildResult r = runScenario("oomthreads", {"ALLOCSCOPE_DEVICE=simulated:1073741824"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out.trimmed(), QString("0 0 0 0"));
    }

    void anOomReturnsNullAndIsRecorded() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("oom.allocscope").toStdString();
        const ChildResult r = runScenario("oom", {"ALLOCSCOPE_SESSION=" + QString::fromStdString(path),
                                                  "ALLOCSCOPE_DEVICE=simulated:1073741824"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QStringList lines = r.out.split('\n');
        QCOMPARE(lines.value(0), QString("kept null"));
        QVERIFY2(lines.value(1).contains("CUDA out of memory"), qPrintable(lines.value(1)));
        storage::SessionReader reader(path);
        const storage::RunRow run = reader.runs().at(0);
        QCOMPARE(run.status, storage::RunStatus::Complete);  // ended by the atexit handler
        QVERIFY(run.summary.has_value());
        QCOMPARE(run.summary->numOoms, std::int64_t{1});
        QCOMPARE(run.info.totalMemory, std::uint64_t{1} << 30);
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--scenario") {
        try {
            return scenario(argv[2]);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "scenario %s: %s\n", argv[2], e.what());
            return 3;
        }
    }
    QCoreApplication app(argc, argv);
    TestTorchAbi suite;
    return QTest::qExec(&suite, argc, argv);
}

#include "TestTorchAbi.moc"
