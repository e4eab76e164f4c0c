#include <QtTest>

#include <sstream>
#include <string>
#include <vector>

#include "allocator/device/CudaProbe.h"
#include "app/cli/DeviceOptions.h"
#include "app/cli/VerbRegistry.h"
#include "tests/cli/InProcessCli.h"

// `run` and `replay` with --gpu cuda:N, in process. Without a GPU (CI) only the refusals are
// checked: a clear "no GPU: ..." error, exit 1, nothing run. With a GPU the runs must decide
// exactly as the simulated GPU of the same size does.
namespace {

using clitest::CliResult;
using clitest::runInProcess;

std::string trace(const char* name) { return std::string(ALLOCSCOPE_TEST_DATA) + "/traces/" + name; }

bool hasGpu() { return !allocscope::alloc::probeCudaDevices().devices.empty(); }

std::string realTotal() { return std::to_string(allocscope::alloc::probeCudaDevices().devices.front().totalMemory); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestGpuCli : public QObject {
    Q_OBJECT

private:
    void expectNoGpu(const std::vector<std::string>& args) {
        const CliResult r = runInProcess(args);
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.err, "allocscope-cli: no GPU: "), r.err.c_str());
        QVERIFY2(contains(r.err, "(--gpu"), r.err.c_str());
        QVERIFY2(r.out.empty(), r.out.c_str());  // nothing ran, nothing reported
    }

private slots:
    // --- no GPU (CI) -------------------------------------------------------------------------
    void runWithoutGpuIsAClearError() {
        if (hasGpu()) QSKIP("a GPU is present: the no-GPU path cannot be exercised here");
        expectNoGpu({"run", "fragmentation-101", "--gpu", "cuda:0"});
        expectNoGpu({"run", "fragmentation-101", "--gpu=cuda:0", "--no-touch", "--config", "backend:cudaMallocAsync"});
    }
    void replayWithoutGpuIsAClearError() {
        if (hasGpu()) QSKIP("a GPU is present: the no-GPU path cannot be exercised here");
        expectNoGpu({"replay", trace("frag101__default.pickle"), "--gpu", "cuda:0", "--stats-json", "-"});
    }
    // --- options, any machine ----------------------------------------------------------------
    void touchNeedsARealGpu() {
        for (const char* flag : {"--touch", "--no-touch"}) {
            const CliResult r = runInProcess({"run", "fragmentation-101", flag});
            QCOMPARE(r.code, 1);
            QVERIFY2(contains(r.err, std::string(flag) + " needs a real GPU: add --gpu cuda:N"), r.err.c_str());
            QVERIFY(r.out.empty());
        }
    }
    void malformedCudaDeviceIsRefused() {
        for (const char* gpu : {"cuda:", "cuda:x", "cuda:-1", "cuda:12345"}) {
            const CliResult r = runInProcess({"replay", trace("frag101__default.pickle"), "--gpu", gpu});
            QCOMPARE(r.code, 1);
            QVERIFY2(contains(r.err, "is not a real GPU: write cuda:N"), r.err.c_str());
        }
    }
    void deviceOptionsParseTouch() {
        using allocscope::cli::DeviceOptions;
        DeviceOptions options;
        const std::vector<std::string> args{"--gpu", "cuda:3", "--no-touch"};
        std::size_t i = 0;
        std::string error;
        while (i < args.size()) QVERIFY(options.consume(args, i, error));
        QVERIFY(error.empty());
        QCOMPARE(*options.gpu, std::string("cuda:3"));
        QCOMPARE(options.touch, std::optional<bool>(false));
        // Resolving a device that is not there is "no GPU", never a simulated fallback.
        if (!hasGpu() || allocscope::alloc::probeCudaDevices().devices.size() <= 3) {
            QVERIFY(!allocscope::cli::resolveDevice(options, error));
            QVERIFY2(error.rfind("no GPU: ", 0) == 0, error.c_str());
        }
    }
    void helpNamesTheRealGpuOptions() {
        for (const char* verb : {"run", "replay"}) {
            const CliResult r = runInProcess({"help", verb});
            QCOMPARE(r.code, 0);
            QVERIFY2(contains(r.out, "--gpu cuda:N") && contains(r.out, "--touch, --no-touch"), r.out.c_str());
        }
    }

    // --- on a GPU ----------------------------------------------------------------------------
    void replayOnGpuEqualsSimulatedReplay_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("frag101 default") << "frag101__default.pickle";
        QTest::newRow("train_gpt expandable") << "train_gpt__expandable.pickle";
        QTest::newRow("kv_growth default") << "kv_growth_limited__default.pickle";
    }
    void replayOnGpuEqualsSimulatedReplay() {
        if (!hasGpu()) QSKIP("no GPU");
        QFETCH(QString, file);
        const std::string path = trace(file.toStdString().c_str());
        const CliResult simulated = runInProcess({"replay", path, "--stats-json", "-", "--total-memory", realTotal()});
        const CliResult gpu = runInProcess({"replay", path, "--stats-json", "-", "--gpu", "cuda:0"});
        QCOMPARE(simulated.code, 0);
        QVERIFY2(gpu.code == 0, gpu.err.c_str());
        QCOMPARE(gpu.out, simulated.out);  // all 122 statistics
        QVERIFY2(contains(gpu.err, "ran on cuda:0 ("), gpu.err.c_str());
        QVERIFY2(contains(gpu.err, "memory touched"), gpu.err.c_str());
        QVERIFY2(contains(gpu.err, "decisions identical to the simulated replay"), gpu.err.c_str());
        QVERIFY2(contains(gpu.err, "real-address order: "), gpu.err.c_str());
    }
    void whatIfReplayOnGpuEqualsSimulated() {
        if (!hasGpu()) QSKIP("no GPU");
        const std::string path = trace("train_gpt__default.pickle");
        const CliResult simulated = runInProcess({"replay", path, "--config", "max_split_size_mb:128", "--stats-json", "-",
                                         "--total-memory", realTotal()});
        const CliResult gpu = runInProcess({"replay", path, "--config", "max_split_size_mb:128", "--stats-json", "-", "--gpu",
                                   "cuda:0", "--no-touch"});
        QVERIFY2(gpu.code == 0, gpu.err.c_str());
        QCOMPARE(gpu.out, simulated.out);
        QVERIFY2(contains(gpu.err, "memory not touched"), gpu.err.c_str());
    }
    void runOnGpuEqualsSimulatedRun() {
        if (!hasGpu()) QSKIP("no GPU");
        for (const char* config : {"", "expandable_segments:True"}) {
            const CliResult simulated = runInProcess({"run", "fragmentation-101", "--config", config, "--events-csv", "-",
                                             "--total-memory", realTotal()});
            const CliResult gpu = runInProcess({"run", "fragmentation-101", "--config", config, "--events-csv", "-", "--gpu", "cuda:0"});
            QVERIFY2(gpu.code == 0, gpu.err.c_str());
            QCOMPARE(gpu.out, simulated.out);  // every event, byte for byte
            QVERIFY2(contains(gpu.err, "real GPU:          cuda:0 ("), gpu.err.c_str());
            QVERIFY2(contains(gpu.err, "real-address order: "), gpu.err.c_str());
        }
    }
    void runFollowsStreamsWithRealEvents() {
        if (!hasGpu()) QSKIP("no GPU");
        // multi-stream: side streams, record_stream and pending frees on real streams and events.
        const CliResult simulated = runInProcess({"run", "multi-stream", "--events-csv", "-", "--total-memory", realTotal()});
        const CliResult gpu = runInProcess({"run", "multi-stream", "--events-csv", "-", "--gpu", "cuda:0"});
        QVERIFY2(gpu.code == 0, gpu.err.c_str());
        QCOMPARE(gpu.out, simulated.out);
        QVERIFY2(contains(gpu.err, "real streams:      "), gpu.err.c_str());
        QVERIFY2(contains(gpu.err, " events recorded at frees"), gpu.err.c_str());
        QVERIFY2(!contains(gpu.err, " 0 events recorded at frees"), gpu.err.c_str());
    }
    void runAsyncBackendOnGpu() {
        if (!hasGpu()) QSKIP("no GPU");
        const CliResult r = runInProcess({"run", "fragmentation-101", "--config", "backend:cudaMallocAsync", "--gpu", "cuda:0"});
        QVERIFY2(r.code == 0, r.err.c_str());
        QVERIFY2(contains(r.out, "cudaMallocAsync on the default memory pool"), r.out.c_str());
    }
    void missingDeviceIsNoGpu() {
        if (!hasGpu()) QSKIP("no GPU");
        const CliResult r = runInProcess({"run", "fragmentation-101", "--gpu", "cuda:999"});
        QCOMPARE(r.code, 1);
        QVERIFY2(contains(r.err, "no GPU: cuda:999 does not exist"), r.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestGpuCli)
#include "TestGpuCli.moc"
