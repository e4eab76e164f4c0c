// The GPU race's simulated contestant without a GPU: AllocScope's CachingAllocator on a
// SimulatedDevice, driven through the race's own pass (tests/gpu/RaceSides.h: racePass with
// AllocScopeSide<SimulatedEvents>) over the race's op sequences (tests/gpu/RaceOps.h):
//   anchor      the allocator-core benchmark's mix, default stream;
//   train_gpt   the alloc/free ops of tests/data/traces/train_gpt__default.pickle, repeated;
//   two_stream  two streams, record_stream on 30% of allocations, pending frees completed
//               (completePendingFree) before the next malloc once a Release has passed them.
// So the allocator core's cost on each race sequence can be measured (and profiled) on a machine
// without CUDA. Per sequence and configuration (default, expandable_segments:True): one warm
// pass, then --passes timed ones on the same allocator; printed are the best wall-clock ns/op
// and the best thread-CPU ns/op (the robust figure on a shared, loaded machine), events to a
// CountingSink as in the race.
//
//   bench_race_sequences [--smoke] [--ops N] [--passes P] [--sequences a,b,c] [--trace PICKLE]
//   --smoke: 2,000 ops a sequence, one pass, no timing claims.
//   --trace: default $ALLOCSCOPE_TEST_DATA (or tests/data)/traces/train_gpt__default.pickle.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"
#include "tests/gpu/RaceOps.h"
#include "tests/gpu/RaceSides.h"

using namespace allocscope;
using namespace allocscope::alloc;
using namespace allocscope::gpu;

namespace {

struct Args {
    bool smoke = false;
    std::size_t ops = 1'000'000;
    int passes = 5;
    std::string trace;
    std::vector<std::string> sequences = {"anchor", "train_gpt", "two_stream"};
};

double threadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

bool parseArgs(int argc, char** argv, Args& args) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--smoke") {
            args.smoke = true;
        } else if ((arg == "--ops" || arg == "--passes") && i + 1 < argc) {
            const unsigned long long number = std::strtoull(argv[++i], nullptr, 10);
            if (number == 0) {
                std::fprintf(stderr, "bench_race_sequences: %s needs a positive number\n", arg.c_str());
                return false;
            }
            if (arg == "--ops") args.ops = number;
            else args.passes = static_cast<int>(number);
        } else if (arg == "--sequences" && i + 1 < argc) {
            args.sequences = raceSequenceNames(argv[++i]);
        } else if (arg == "--trace" && i + 1 < argc) {
            args.trace = argv[++i];
        } else {
            std::fprintf(stderr, "bench_race_sequences: bad argument '%s'\n", arg.c_str());
            return false;
        }
    }
    for (const std::string& name : args.sequences) {
        if (name != "anchor" && name != "train_gpt" && name != "two_stream") {
            std::fprintf(stderr, "bench_race_sequences: unknown sequence '%s' (anchor, train_gpt, two_stream)\n", name.c_str());
            return false;
        }
    }
    if (args.trace.empty()) args.trace = defaultRaceTracePath();
    if (args.smoke) {
        args.ops = 2'000;
        args.passes = 1;
    }
    return true;
}

std::optional<RaceOps> buildSequence(const std::string& name, const Args& args) {
    if (name == "anchor") return makeRaceOps(args.ops);
    if (name == "two_stream") return makeTwoStreamOps(args.ops);
    try {
        return trainGptRaceOps(args.trace, args.ops);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "bench_race_sequences: cannot read %s: %s\n", args.trace.c_str(), error.what());
        return std::nullopt;
    }
}

// Best wall and thread-CPU ns/op over the timed passes; false if an allocation failed.
bool raceSequence(const RaceOps& race, const Args& args, bool expandable) {
    AllocatorConfig config;
    config.expandableSegments = expandable;
    const GpuPreset preset = *findGpuPreset(kDefaultGpuPreset);
    SimulatedDevice device(preset);
    CountingSink sink;
    CachingAllocator allocator(config, device, &sink);
    SimulatedEvents events;
    // Stream ids as the race's streams would be: any two distinct non-zero values.
    const std::uint64_t handles[3] = {0, 0x1000, 0x2000};
    AllocScopeSide<SimulatedEvents> side(allocator, events, nullptr, handles);
    const std::size_t n = race.ops.size();
    const std::vector<std::uint32_t> leftover = race.liveAfter(n);
    std::vector<std::uint64_t> pointers(race.idCount, 0);
    std::vector<std::uint8_t> uses(race.idCount, 0);
    const double timedOps = static_cast<double>(race.timedOps(n) + leftover.size());
    double bestWall = 1e30;
    double bestCpu = 1e30;
    for (int pass = 0; pass <= args.passes; ++pass) {
        const double cpuStart = threadCpuNs();
        const double wall = racePass(race, n, leftover, pointers, uses, side, [] {});
        const double cpu = (threadCpuNs() - cpuStart) / timedOps;  // Release's bookkeeping included
        if (side.failed) {
            std::fprintf(stderr, "bench_race_sequences: %s: an allocation failed or a free was refused\n", race.name.c_str());
            return false;
        }
        if (pass == 0) continue;  // warm-up: segments created, caches filled
        bestWall = std::min(bestWall, wall);
        bestCpu = std::min(bestCpu, cpu);
    }
    const char* configName = expandable ? "expandable_segments:True" : "default";
    if (args.smoke) {
        std::printf("%-10s %-24s ran (smoke, no timing)\n", race.name.c_str(), configName);
    } else {
        std::printf("%-10s %-24s %8.1f %8.1f   (%zu ops, %llu events)\n", race.name.c_str(), configName, bestWall, bestCpu, n,
                    static_cast<unsigned long long>(sink.total()));
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parseArgs(argc, argv, args)) return 2;
    std::printf("the GPU race's simulated side, best of %d passes after a warm one\n", args.passes);
    std::printf("%-10s %-24s %8s %8s\n", "sequence", "config", "wall_ns", "cpu_ns");
    bool ok = true;
    for (const std::string& name : args.sequences) {
        const std::optional<RaceOps> race = buildSequence(name, args);
        if (!race) {
            ok = false;
            continue;
        }
        for (bool expandable : {false, true}) ok = raceSequence(*race, args, expandable) && ok;
    }
    return ok ? 0 : 1;
}
