// Replays a recorded PyTorch trace through the CUDA backend on a real GPU and writes the final
// statistics for tests/gpu/compare_stats.py to hold against the trace's ground truth (W__C.json).
// `allocscope-cli replay --gpu cuda:N` does the translated run for users; this program also runs
// the direct and async variants side by side.
//
// The trace is first replayed on the simulated device (TraceReplayer: recorded addresses,
// inferred empty_cache() calls); the program it applied then runs three times on the GPU:
//   translated: CudaDevice in address-translation mode, a SimulatedDevice deciding addresses with
//               an oracle that hands out the simulated replay's segment addresses in order, so
//               the decisions must be the recording's (events compared one by one);
//   direct:     CudaDevice on real pointers (the driver's placement decides address ties);
//   async:      CudaAsyncBackend (backend:cudaMallocAsync; compare with W__async.json).
//
//   bench_gpu_replay [--smoke] [TRACE.pickle] [--memory-fraction F] [--out-dir DIR] [--touch]
//   --smoke without TRACE: $ALLOCSCOPE_TEST_DATA/traces/frag101__default.pickle.
// Writes DIR/NAME.{sim,translated,direct,async}.json; without a GPU prints "no GPU" and exits 0.
// Exit 1 when the translated run's events differ from the simulated replay's.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#if defined(ALLOCSCOPE_HAVE_CUDA) && (defined(ALLOCSCOPE_HAVE_STORAGE) || defined(ALLOCSCOPE_GPU_WITH_IMPORT))
#define ALLOCSCOPE_GPU_REPLAY 1
#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/device/cuda/CudaAsyncBackend.h"
#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaProgramRun.h"
#include "allocator/device/cuda/RecordedSegmentAddresses.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/import/TraceImport.h"
#include "tests/gpu/FlatStatsJson.h"
#endif

namespace {

struct Args {
    bool smoke = false;
    bool touch = false;
    std::string trace;
    std::optional<double> fraction;
    std::string outDir = ".";
};

bool parseArgs(int argc, char** argv, Args& args) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--smoke") {
            args.smoke = true;
        } else if (arg == "--touch") {
            args.touch = true;
        } else if (arg == "--memory-fraction" && i + 1 < argc) {
            char* end = nullptr;
            const double value = std::strtod(argv[++i], &end);
            if (end == nullptr || *end != '\0' || !(value > 0.0)) return false;
            args.fraction = value;
        } else if (arg == "--out-dir" && i + 1 < argc) {
            args.outDir = argv[++i];
        } else if (!arg.empty() && arg[0] != '-' && args.trace.empty()) {
            args.trace = arg;
        } else {
            return false;
        }
    }
    if (args.trace.empty() && args.smoke) {
        const char* data = std::getenv("ALLOCSCOPE_TEST_DATA");
        args.trace = std::string(data != nullptr ? data : "tests/data") + "/traces/frag101__default.pickle";
    }
    return !args.trace.empty();
}

#ifdef ALLOCSCOPE_GPU_REPLAY

using namespace allocscope::alloc;

std::string baseName(const std::string& path) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    const std::size_t dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(0, dot);
}

void write(const std::string& path, const DeviceStats& stats) {
    if (!allocscope::gpu::writeFlatStatsJson(path, stats)) std::fprintf(stderr, "bench_gpu_replay: cannot write %s\n", path.c_str());
}

int replay(const Args& args) {
    const std::vector<RecordedTrace> traces = allocscope::storage::importTraceFile(args.trace);
    if (traces.empty()) {
        std::fprintf(stderr, "bench_gpu_replay: %s holds no trace\n", args.trace.c_str());
        return 1;
    }
    const RecordedTrace& trace = traces.front();
    const ParseResult parsed = parseConfig(trace.settings.value_or(""));
    if (!parsed.accepted()) {
        std::fprintf(stderr, "bench_gpu_replay: %s: recorded settings refused: %s\n", args.trace.c_str(), parsed.pytorchMessage.c_str());
        return 1;
    }
    const std::string name = baseName(args.trace);
    const std::string prefix = args.outDir + "/" + name;

    ReplayOptions options;
    options.config = parsed.config;
    options.memoryFraction = args.fraction;
    VectorSink simulatedEvents;
    options.sink = &simulatedEvents;
    const ReplayResult simulated = TraceReplayer::replay(trace, options);
    write(prefix + ".sim.json", simulated.stats);
    std::printf("%s: simulated replay %s, %zu ops, %zu events\n", name.c_str(), simulated.exact() ? "exact" : "NOT exact",
                simulated.program.ops.size(), simulatedEvents.events.size());

    int status = 0;
    {  // translated: the recording's decisions, real memory
        SimulatedDevice decider(options.totalMemory, options.otherMemory);
        RecordedSegmentAddresses recorded(simulatedEvents.events);
        decider.setAddressOracle([&](const PlacementRequest& request) { return recorded.next(request); });
        CudaDevice device(CudaDeviceOptions{0, args.touch, &decider});
        VectorSink events;
        CachingAllocator allocator(options.config, device, &events);
        if (args.fraction) allocator.setMemoryFraction(*args.fraction);
        const ProgramResult result = ProgramRunner(allocator).run(simulated.program);
        write(prefix + ".translated.json", allocator.stats());
        const std::string diff = CudaProgramRun::firstDifference(events.events, simulatedEvents.events);
        std::printf("%s: translated %s; events %s; oracle misses %llu; order disagreements %llu; GPU-only OOMs %llu\n", name.c_str(),
                    result.ok() ? "ran" : ("STOPPED: " + result.error->message).c_str(),
                    diff.empty() ? "IDENTICAL to the simulated replay" : ("DIFFER: " + diff).c_str(),
                    static_cast<unsigned long long>(recorded.misses()),
                    static_cast<unsigned long long>(device.orderDisagreements()),
                    static_cast<unsigned long long>(device.counters().realOomDivergences));
        if (!diff.empty() || !result.ok()) status = 1;
    }
    {  // direct: real pointers decide address ties
        CudaDevice device(CudaDeviceOptions{0, args.touch, nullptr});
        CachingAllocator allocator(options.config, device, nullptr);
        if (args.fraction) allocator.setMemoryFraction(*args.fraction);
        const ProgramResult result = ProgramRunner(allocator).run(simulated.program);
        write(prefix + ".direct.json", allocator.stats());
        std::printf("%s: direct %s; %zu OOMs; cudaMalloc %llu, pages mapped %llu\n", name.c_str(),
                    result.ok() ? "ran" : ("STOPPED: " + result.error->message).c_str(), result.ooms.size(),
                    static_cast<unsigned long long>(device.counters().cudaMallocCalls),
                    static_cast<unsigned long long>(device.counters().pagesMapped));
    }
    {  // backend:cudaMallocAsync
        CudaAsyncBackend backend(0);
        if (args.fraction) backend.setMemoryFraction(*args.fraction);
        const CudaAsyncRunResult result = backend.run(simulated.program, args.touch);
        write(prefix + ".async.json", backend.stats());
        std::printf("%s: async %llu allocs, %llu OOMs\n", name.c_str(), static_cast<unsigned long long>(result.allocs),
                    static_cast<unsigned long long>(result.ooms));
    }
    return status;
}

#endif  // ALLOCSCOPE_GPU_REPLAY

}  // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parseArgs(argc, argv, args)) {
        std::fprintf(stderr, "usage: bench_gpu_replay [--smoke] TRACE [--memory-fraction F] [--out-dir DIR] [--touch]\n");
        return 2;
    }
#ifdef ALLOCSCOPE_GPU_REPLAY
    if (auto reason = CudaDevice::unavailableReason(0)) {
        std::printf("%s\n", reason->c_str());
        return 0;
    }
    try {
        return replay(args);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "bench_gpu_replay: %s: %s\n", args.trace.c_str(), error.what());
        return 1;
    }
#else
    std::printf("no GPU: built without CUDA support or without the trace importer\n");
    return 0;
#endif
}
