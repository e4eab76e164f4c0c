// Cost of one CachingAllocator operation (malloc or free) on the simulated h100-80gb, for the
// default config and expandable_segments:True: the fixed 1,000,000-op sequence of
// AllocBenchSequence.h, events to a CountingSink, best of 5 warm passes (same allocator, cache
// warm, like the GPU anchor benchmark). --smoke: 2,000 ops, one pass, no timing claims.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"
#include "tests/benchmarks/AllocBenchSequence.h"
#include "tests/benchmarks/BenchClock.h"

using namespace allocscope;
using namespace allocscope::alloc;

namespace {

struct PassTime {
    double wallNs = -1;  // per op
    double cpuNs = -1;   // per op, this thread's CPU time (robust on a shared, loaded machine)
};

// One pass: every op, then free what is still live. Returns ns per operation, or < 0 on a
// failed malloc (the sequence stays far below the device's memory, so none is expected).
PassTime runPass(CachingAllocator& allocator, const std::vector<bench::BenchOp>& ops) {
    std::vector<std::uint64_t> live;
    live.reserve(bench::kBenchMaxLive + 1);
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = bench::threadCpuNs();
    for (const bench::BenchOp& op : ops) {
        if (op.alloc) {
            const std::optional<std::uint64_t> address = allocator.malloc(op.size, 0);
            if (!address) return {};
            live.push_back(*address);
        } else {
            allocator.free(live[op.victim]);
            live[op.victim] = live.back();
            live.pop_back();
        }
    }
    const std::size_t tail = live.size();
    for (std::uint64_t address : live) allocator.free(address);
    const double cpuEnd = bench::threadCpuNs();
    const auto end = std::chrono::steady_clock::now();
    const auto count = static_cast<double>(ops.size() + tail);
    return {std::chrono::duration<double, std::nano>(end - start).count() / count, (cpuEnd - cpuStart) / count};
}

}  // namespace

int main(int argc, char** argv) {
    const bool smoke = bench::smokeRequested(argc, argv);
    const std::size_t count = smoke ? 2000 : 1000000;
    const int passes = smoke ? 1 : 5;
    const std::vector<bench::BenchOp> ops = bench::makeBenchSequence(count);
    const GpuPreset preset = *findGpuPreset(kDefaultGpuPreset);
    std::printf("device %s (simulated), ops %zu\n", preset.name.c_str(), ops.size());
    struct Variant {
        const char* name;
        bool expandable;
    };
    for (const Variant& variant : {Variant{"default", false}, Variant{"expandable_segments", true}}) {
        AllocatorConfig config;
        config.expandableSegments = variant.expandable;
        SimulatedDevice device(preset);
        CountingSink sink;
        CachingAllocator allocator(config, device, &sink);
        if (runPass(allocator, ops).wallNs < 0) {  // warm-up pass
            std::fprintf(stderr, "unexpected OOM in the benchmark sequence\n");
            return 1;
        }
        double best = 1e30;
        double bestCpu = 1e30;
        for (int pass = 0; pass < passes; ++pass) {
            const PassTime time = runPass(allocator, ops);
            if (time.wallNs < 0) return 1;
            if (time.wallNs < best) best = time.wallNs;
            if (time.cpuNs < bestCpu) bestCpu = time.cpuNs;
        }
        if (smoke) {
            std::printf("%s: ran (smoke, no timing)\n", variant.name);
        } else {
            std::printf("%s_ns_per_op %.1f (thread CPU %.1f ns/op; events %llu, device allocs %lld)\n", variant.name,
                        best, bestCpu,
                        static_cast<unsigned long long>(sink.total()),
                        static_cast<long long>(allocator.stats().num_device_alloc));
        }
    }
    return 0;
}
