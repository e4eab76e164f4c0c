#include "app/lessons/TraceRun.h"

#include <memory>

#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/replay/DriverPlacementModel.h"
#include "allocator/replay/TraceReplayer.h"

namespace allocscope::app {
namespace {

// Counts what RunMetrics reports from the event stream, and follows reserved memory to find the
// op where it peaked.
class ReplayMetricsSink final : public alloc::EventSink {
public:
    void onEvent(const alloc::Event& e) override {
        ++events;
        switch (e.action) {
            case alloc::EventAction::SegmentAlloc:
                ++mallocs;
                grow(e, static_cast<std::int64_t>(e.size));
                break;
            case alloc::EventAction::SegmentFree:
                ++frees;
                if (e.cause == alloc::EventCause::Gc) ++gc;
                reserved -= static_cast<std::int64_t>(e.size);
                break;
            case alloc::EventAction::SegmentMap:
                ++maps;
                grow(e, static_cast<std::int64_t>(e.size));
                break;
            case alloc::EventAction::SegmentUnmap:
                ++unmaps;
                reserved -= static_cast<std::int64_t>(e.size);
                break;
            case alloc::EventAction::Oom: ooms.push_back({e.opIndex, ""}); break;
            default: break;
        }
    }
    std::uint64_t events = 0, mallocs = 0, frees = 0, maps = 0, unmaps = 0, gc = 0;
    std::int64_t reserved = 0, peak = 0;
    std::uint64_t peakOp = 0;
    std::vector<alloc::RunOom> ooms;

private:
    void grow(const alloc::Event& e, std::int64_t size) {
        reserved += size;
        if (reserved > peak) {
            peak = reserved;
            peakOp = e.opIndex;
        }
    }
};

std::uint64_t u64(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

}  // namespace

alloc::AllocatorConfig TraceRun::recordedConfig(const alloc::RecordedTrace& trace) {
    const alloc::ParseResult parsed = alloc::parseConfig(trace.settings.value_or(""));
    if (!parsed.accepted() || parsed.config.backend != alloc::Backend::Native) return alloc::AllocatorConfig{};
    return parsed.config;
}

TracePlan TraceRun::plan(const alloc::RecordedTrace& trace, const alloc::AllocatorConfig& config, const TraceRunDevice& device,
                         const std::optional<std::vector<std::size_t>>& emptyCacheSteps) {
    TracePlan p;
    p.options.config = config;
    p.options.memoryFraction = device.memoryFraction;
    p.options.totalMemory = device.totalMemory;
    p.options.otherMemory = device.otherMemory;
    p.options.continueAfterOom = true;
    p.options.emptyCacheSteps = emptyCacheSteps;
    p.placement = std::make_unique<alloc::DriverPlacementModel>(trace);
    const alloc::AllocatorConfig recorded = recordedConfig(trace);
    if (config == recorded || !trace.settings) {
        // Recorded addresses; the driver model only where the run leaves the recording.
        p.options.fallbackPlacement = p.placement.get();
    } else {
        p.options.placement = p.placement.get();
        p.whatIfRecordedConfig = recorded;
    }
    return p;
}

alloc::RunMetrics TraceRun::run(const alloc::RecordedTrace& trace, const alloc::AllocatorConfig& config,
                                const TraceRunDevice& device, const std::optional<std::vector<std::size_t>>& emptyCacheSteps,
                                alloc::EventSink* sink, alloc::Program& program, std::vector<std::size_t>* inferred) {
    ReplayMetricsSink counter;
    alloc::TeeSink tee;
    tee.add(&counter);
    if (sink != nullptr) tee.add(sink);
    TracePlan p = plan(trace, config, device, emptyCacheSteps);
    p.options.sink = &tee;
    const alloc::ReplayResult result = p.whatIfRecordedConfig
                                           ? alloc::TraceReplayer::replayWhatIf(trace, *p.whatIfRecordedConfig, p.options)
                                           : alloc::TraceReplayer::replay(trace, p.options);
    alloc::RunMetrics m;
    const alloc::DeviceStats& s = result.stats;
    m.configText = alloc::formatConfig(config);
    m.ops = result.program.ops.size();
    for (const alloc::Op& op : result.program.ops) {
        if (op.kind == alloc::OpKind::Alloc || op.kind == alloc::OpKind::Free) ++m.allocFreeOps;
    }
    m.events = counter.events;
    m.peakAllocated = u64(s.allocated_bytes[alloc::kAggregate].peak);
    m.peakReserved = u64(s.reserved_bytes[alloc::kAggregate].peak);
    m.peakReservedOp = counter.peakOp;
    m.finalAllocated = u64(s.allocated_bytes[alloc::kAggregate].current);
    m.finalReserved = u64(s.reserved_bytes[alloc::kAggregate].current);
    m.atEnd = alloc::FragmentationMetrics::of(result.segments, alloc::kSmallBuffer, config.largeSegmentSize);
    m.cudaMallocs = counter.mallocs;
    m.cudaFrees = counter.frees;
    m.maps = counter.maps;
    m.unmaps = counter.unmaps;
    m.gcReleases = counter.gc;
    m.retries = u64(s.num_alloc_retries);
    m.ooms = counter.ooms;
    if (!m.ooms.empty() && result.unexpectedOomOp) m.ooms.front().message = result.unexpectedOomMessage;
    m.stats = s;
    program = result.program;
    if (inferred != nullptr) *inferred = result.emptyCacheSteps;
    return m;
}

}  // namespace allocscope::app
