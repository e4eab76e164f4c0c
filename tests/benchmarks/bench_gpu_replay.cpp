// Replays a recorded PyTorch trace through the CUDA backend on a real GPU and writes the final
// statistics for tests/gpu/compare_stats.py to hold against the trace's ground truth (W__C.json).
// A stop-gap until `allocscope-cli replay --gpu cuda:N` exists.
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
#include <deque>
#include <map>
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

std::string firstEventDifference(const std::vector<Event>& a, const std::vector<Event>& b) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
        const Event& x = a[i];
        const Event& y = b[i];
        if (x.action != y.action || x.address != y.address || x.size != y.size || x.segment != y.segment ||
            x.stream != y.stream || x.cause != y.cause) {
            return "event " + std::to_string(i) + ": " + std::string(actionName(x.action)) + " " + std::to_string(x.address) +
                   " vs " + std::string(actionName(y.action)) + " " + std::to_string(y.address);
        }
    }
    if (a.size() != b.size()) return "event count " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    return "";
}

// Hands out, in order, the segment and reservation addresses the simulated replay used.
class RecordedAddresses {
public:
    explicit RecordedAddresses(const std::vector<Event>& events) {
        // A reservation has no event of its own: it shows as the `segment` of its segment_map
        // events. It lives until release_blocks unmaps its last page (PyTorch then frees it), so
        // a base seen again after that is a new reservation.
        std::map<std::uint64_t, std::uint64_t> mapped;  // live reservation base -> mapped bytes
        for (const Event& e : events) {
            if (e.action == EventAction::SegmentAlloc) segments_.push_back({e.size, e.address});
            if (e.action == EventAction::SegmentMap) {
                if (mapped.find(e.segment) == mapped.end()) reservations_.push_back(e.segment);
                mapped[e.segment] += e.size;
            }
            if (e.action == EventAction::SegmentUnmap) {
                auto it = mapped.find(e.segment);
                if (it != mapped.end() && (it->second -= std::min(it->second, e.size)) == 0) mapped.erase(it);
            }
        }
    }
    std::optional<std::uint64_t> next(const PlacementRequest& request) {
        if (request.kind == PlacementRequest::Kind::Segment) {
            if (segments_.empty() || segments_.front().first != request.size) {
                ++misses_;
                return std::nullopt;
            }
            const std::uint64_t address = segments_.front().second;
            segments_.pop_front();
            return address;
        }
        if (reservations_.empty()) {
            ++misses_;
            return std::nullopt;
        }
        const std::uint64_t address = reservations_.front();
        reservations_.pop_front();
        return address;
    }
    std::uint64_t misses() const { return misses_; }

private:
    std::deque<std::pair<std::uint64_t, std::uint64_t>> segments_;  // (size, address)
    std::deque<std::uint64_t> reservations_;
    std::uint64_t misses_ = 0;
};

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
        RecordedAddresses recorded(simulatedEvents.events);
        decider.setAddressOracle([&](const PlacementRequest& request) { return recorded.next(request); });
        CudaDevice device(CudaDeviceOptions{0, args.touch, &decider});
        VectorSink events;
        CachingAllocator allocator(options.config, device, &events);
        if (args.fraction) allocator.setMemoryFraction(*args.fraction);
        const ProgramResult result = ProgramRunner(allocator).run(simulated.program);
        write(prefix + ".translated.json", allocator.stats());
        const std::string diff = firstEventDifference(events.events, simulatedEvents.events);
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
