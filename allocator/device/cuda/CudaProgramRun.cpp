#include "allocator/device/cuda/CudaProgramRun.h"

#include <algorithm>
#include <sstream>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/device/cuda/CudaStreamEvents.h"
#include "allocator/device/cuda/RecordedSegmentAddresses.h"

namespace allocscope::alloc {

namespace {

std::string describe(const Event& e) {
    std::ostringstream out;
    out << actionName(e.action) << " 0x" << std::hex << e.address << std::dec << " size " << e.size << " stream "
        << e.stream << " segment 0x" << std::hex << e.segment << std::dec << " (" << causeName(e.cause) << ")";
    return out.str();
}

bool sameDecision(const Event& a, const Event& b) {
    return a.action == b.action && a.address == b.address && a.size == b.size && a.roundedSize == b.roundedSize &&
           a.stream == b.stream && a.segment == b.segment && a.pool == b.pool && a.cause == b.cause;
}

}  // namespace

std::string CudaProgramRun::firstDifference(const std::vector<Event>& actual, const std::vector<Event>& expected) {
    const std::size_t n = std::min(actual.size(), expected.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (!sameDecision(actual[i], expected[i])) {
            return "event " + std::to_string(i) + " (op " + std::to_string(actual[i].opIndex) + "): " + describe(actual[i]) +
                   " on the GPU, " + describe(expected[i]) + " simulated";
        }
    }
    if (actual.size() != expected.size()) {
        return std::to_string(actual.size()) + " events on the GPU, " + std::to_string(expected.size()) + " simulated";
    }
    return "";
}

CudaProgramRunResult CudaProgramRun::run(const Program& program, const CudaProgramRunOptions& options) {
    CudaProgramRunResult result;
    SimulatedDevice decider(options.totalMemory, options.otherMemory);
    std::optional<RecordedSegmentAddresses> recorded;
    if (options.simulatedEvents != nullptr) {
        recorded.emplace(*options.simulatedEvents);
        decider.setAddressOracle([&](const PlacementRequest& request) { return recorded->next(request); });
    }
    CudaDevice device(CudaDeviceOptions{options.device, options.touch, &decider});
    VectorSink events;
    TeeSink tee;
    tee.add(&events);
    if (options.sink != nullptr) tee.add(options.sink);
    {
        CachingAllocator allocator(options.config, device, &tee);
        if (options.memoryFraction) allocator.setMemoryFraction(*options.memoryFraction);
        ProgramRunner runner(allocator);
        // Real streams and events for record_stream and pending frees, around every op.
        CudaStreamEvents streams(options.device, options.touch, [&](std::uint64_t id) -> std::optional<std::uint64_t> {
            const std::optional<std::uint64_t> address = runner.addressOf(id);
            if (!address || *address == 0) return std::nullopt;
            return device.realAddress(*address);
        });
        SpillArray<Op>::Walk walk(program.ops);  // a big program's ops leave memory behind the run
        for (std::size_t i = 0; i < program.ops.size(); ++i) {
            walk.at(i);
            streams.before(program.ops[i]);
            if (!runner.apply(program.ops[i], i, result.program)) break;
            streams.after(program.ops[i]);
        }
        result.streamEvents = streams.counters();
        result.stats = allocator.stats();
        result.segments = allocator.segments();
        result.summary = allocator.memorySummary(options.summaryDevice);
    }  // the allocator is gone; CudaDevice gives back what the program still held when it is
    result.deviceName = device.name();
    result.counters = device.counters();
    result.newRanges = result.counters.cudaMallocCalls + result.counters.reservations;
    result.events = events.events.size();
    if (recorded) {
        result.oracleMisses = recorded->misses();
        result.eventDifference = firstDifference(events.events, *options.simulatedEvents);
    }
    return result;
}

}  // namespace allocscope::alloc
