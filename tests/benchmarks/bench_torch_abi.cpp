// What liballocscope_torch.so costs the allocating thread: ns per operation (a malloc or a free;
// a malloc/free pair is two) through the C ABI, loaded with dlopen as PyTorch loads it, on the
// simulated h100-80gb size, for the anchor sequence of AllocBenchSequence.h (1,000,000 ops):
//   direct  CachingAllocator called in this process, events to a CountingSink (the floor);
//   abi     the C ABI, nothing recorded;
//   record  the C ABI with ALLOCSCOPE_SESSION: every event goes to the session writer's thread.
// Each C ABI variant runs in a child process (the library reads its environment once), best of
// 3 passes; `finish` is what allocscope_finish then waits for (the writer catching up, summary,
// heatmap). --smoke: 2,000 ops, one pass, no timing claims.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"
#include "tests/benchmarks/AllocBenchSequence.h"
#include "tests/benchmarks/BenchClock.h"
#include "tests/torch/TorchApi.h"

using namespace allocscope;

namespace {

constexpr unsigned long long kTotal = 85899345920ULL;  // 80 GiB

struct PassTime {
    double wallNs = 1e300;
    double cpuNs = 1e300;
};

// One pass of the sequence, then the frees of what is still live; ns per operation.
template <class Alloc, class Free>
PassTime pass(const std::vector<bench::BenchOp>& ops, Alloc&& alloc, Free&& free) {
    std::vector<std::uint64_t> live;
    live.reserve(bench::kBenchMaxLive + 1);
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = bench::threadCpuNs();
    for (const bench::BenchOp& op : ops) {
        if (op.alloc) {
            live.push_back(alloc(op.size));
        } else {
            free(live[op.victim]);
            live[op.victim] = live.back();
            live.pop_back();
        }
    }
    const std::size_t tail = live.size();
    for (std::uint64_t address : live) free(address);
    const double cpu = bench::threadCpuNs() - cpuStart;
    const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    const auto n = static_cast<double>(ops.size() + tail);
    return {wall / n, cpu / n};
}

void report(const char* variant, PassTime best, const std::string& extra) {
    std::printf("%-7s %8.1f ns/op wall %8.1f ns/op thread-cpu%s\n", variant, best.wallNs, best.cpuNs, extra.c_str());
    std::fflush(stdout);
}

void keepBest(PassTime& best, PassTime t) {
    if (t.wallNs < best.wallNs) best.wallNs = t.wallNs;
    if (t.cpuNs < best.cpuNs) best.cpuNs = t.cpuNs;
}

int runAbi(const std::vector<bench::BenchOp>& ops, int passes, bool record) {
    const testing::TorchApi api = testing::TorchApi::load(ALLOCSCOPE_TORCH_LIB);
    if (api.useSimulatedDevice(kTotal) != 0) return std::fprintf(stderr, "%s\n", api.lastError()), 1;
    bool failed = false;
    auto alloc = [&](std::uint64_t size) {
        void* p = api.malloc(size, 0, nullptr);
        failed = failed || p == nullptr;
        return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p));
    };
    auto free = [&](std::uint64_t address) { api.free(reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), 0, 0, nullptr); };
    PassTime best;
    for (int i = 0; i < passes; ++i) keepBest(best, pass(ops, alloc, free));
    const auto start = std::chrono::steady_clock::now();
    if (api.finish() != 0) return std::fprintf(stderr, "%s\n", api.lastError()), 1;
    const double finishMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (failed) return std::fprintf(stderr, "a malloc failed\n"), 1;
    report(record ? "record" : "abi", best, record ? "  (finish " + std::to_string(static_cast<long long>(finishMs)) + " ms)" : "");
    return 0;
}

// The C ABI variant in a child process of its own environment.
bool inChild(const std::vector<bench::BenchOp>& ops, int passes, bool record, const std::string& session) {
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) {
        unsetenv("ALLOCSCOPE_CUDA_ALLOC_CONF");
        unsetenv("ALLOCSCOPE_DEVICE");
        if (record) setenv("ALLOCSCOPE_SESSION", session.c_str(), 1);
        else unsetenv("ALLOCSCOPE_SESSION");
        std::exit(runAbi(ops, passes, record));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

int main(int argc, char** argv) {
    const bool smoke = bench::smokeRequested(argc, argv);
    const std::size_t count = smoke ? 2000 : 1000000;
    const int passes = smoke ? 1 : 3;
    const std::vector<bench::BenchOp> ops = bench::makeBenchSequence(count);
    std::printf("simulated device of %llu bytes, ops %zu per pass, best of %d\n", kTotal, ops.size(), passes);

    alloc::SimulatedDevice device(kTotal, 0);
    alloc::CountingSink sink;
    alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &sink);
    PassTime best;
    for (int i = 0; i < passes; ++i) {
        keepBest(best, pass(ops, [&](std::uint64_t size) { return allocator.malloc(size, 0).value_or(0); },
                            [&](std::uint64_t address) { allocator.free(address); }));
    }
    // Events per op: what the recording writes (the writer commits ~1.5-3 M events/s).
    report("direct", best, "  (" + std::to_string(static_cast<double>(sink.total()) / (static_cast<double>(passes) * static_cast<double>(ops.size()))).substr(0, 4) +
                               " events/op)");

    char dir[] = "/tmp/bench_torch_abi.XXXXXX";
    if (!mkdtemp(dir)) return std::perror("mkdtemp"), 1;
    const std::string session = std::string(dir) + "/bench.allocscope";
    const bool ok = inChild(ops, passes, false, session) && inChild(ops, passes, true, session);
    std::remove(session.c_str());
    rmdir(dir);
    return ok ? 0 : 1;
}
