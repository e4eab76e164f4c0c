#include "allocator/compare/ComparisonEngine.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "allocator/compare/AsyncBackendModel.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc {

CompareDevice CompareDevice::ofPreset(const GpuPreset& preset) {
    CompareDevice device;
    device.name = preset.name;
    device.totalMemory = preset.totalMemory;
    device.otherMemory = preset.contextMemory;
    return device;
}

namespace {

// Counts what a comparison reports, without keeping the events.
class MetricsSink final : public EventSink {
public:
    void onEvent(const Event& e) override {
        ++events;
        switch (e.action) {
        case EventAction::SegmentAlloc: ++mallocs; break;
        case EventAction::SegmentFree:
            ++frees;
            if (e.cause == EventCause::Gc) ++gc;
            break;
        case EventAction::SegmentMap: ++maps; break;
        case EventAction::SegmentUnmap: ++unmaps; break;
        default: break;
        }
    }
    std::uint64_t events = 0, mallocs = 0, frees = 0, maps = 0, unmaps = 0, gc = 0;
};

std::uint64_t u64(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

bool isAllocOrFree(const Op& op) { return op.kind == OpKind::Alloc || op.kind == OpKind::Free; }

std::size_t strideFor(const Program& program, const CompareOptions& options) {
    if (options.timelinePoints == 0) return 0;
    return std::max<std::size_t>(1, program.ops.size() / options.timelinePoints);
}

RunMetrics runAsync(const Program& program, const CompareConfig& config, const CompareDevice& device,
                    const CompareOptions& options) {
    RunMetrics m;
    m.asyncBackend = true;
    std::optional<double> fraction = device.memoryFraction;
    if (!fraction && config.config.perProcessMemoryFraction) fraction = config.config.perProcessMemoryFraction;
    AsyncBackendModel model(device.totalMemory, device.otherMemory, fraction);
    AsyncRunResult r;
    const std::size_t stride = strideFor(program, options);
    SpillArray<Op>::Walk walk(program.ops);  // a big program's ops leave memory behind the run
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
        walk.at(i);
        if (!model.apply(program.ops[i], i, r)) break;
        if (stride != 0 && (i % stride == 0 || i + 1 == program.ops.size())) {
            m.timeline.push_back({i, model.used(), model.reserved()});
        }
    }
    m.ops = r.opsRun;
    m.allocFreeOps = r.allocFreeOps;
    m.stats = r.stats;
    m.peakAllocated = u64(r.stats.allocated_bytes[kAggregate].peak);
    m.peakReserved = u64(r.stats.reserved_bytes[kAggregate].peak);
    m.peakReservedOp = r.peakReservedOp;
    m.finalAllocated = u64(r.stats.allocated_bytes[kAggregate].current);
    m.finalReserved = u64(r.stats.reserved_bytes[kAggregate].current);
    for (const auto& oom : r.ooms) m.ooms.push_back({oom.opIndex, oom.message});
    m.error = r.error;
    m.allocatorUs = options.cost.asyncUs(m.allocFreeOps);
    return m;
}

RunMetrics runNative(const Program& program, const CompareConfig& config, const CompareDevice& device,
                     const CompareOptions& options) {
    RunMetrics m;
    SimulatedDevice simulated(device.totalMemory, device.otherMemory, device.name);
    DeviceMemory& gpu = options.deviceMemory != nullptr ? *options.deviceMemory : simulated;
    MetricsSink sink;
    TeeSink tee;
    tee.add(&sink);
    if (options.sink != nullptr) tee.add(options.sink);
    RunObserver* const observer = options.observer;
    if (observer != nullptr) tee.add(observer);
    CachingAllocator allocator(config.config, gpu, &tee);
    if (device.memoryFraction) allocator.setMemoryFraction(*device.memoryFraction);
    ProgramRunner runner(allocator);
    ProgramResult result;
    const std::uint64_t smallPage = kSmallBuffer;
    const std::uint64_t largePage = config.config.largeSegmentSize;
    const std::size_t stride = strideFor(program, options);
    std::int64_t peak = allocator.stats().reserved_bytes[kAggregate].peak;
    SpillArray<Op>::Walk walk(program.ops);
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
        walk.at(i);
        const Op& op = program.ops[i];
        if (options.opHook) options.opHook(op, false);
        if (observer != nullptr) observer->beforeOp(op, i);
        if (!runner.apply(op, i, result)) break;
        if (observer != nullptr) observer->afterOp(op, i, allocator);
        if (options.opHook) options.opHook(op, true);
        if (isAllocOrFree(op)) ++m.allocFreeOps;
        const DeviceStats& stats = allocator.stats();
        if (stats.reserved_bytes[kAggregate].peak > peak) {
            peak = stats.reserved_bytes[kAggregate].peak;
            m.peakReservedOp = i;
            if (options.fragmentationAtPeak) m.atPeak = FragmentationMetrics::of(allocator.segments(), smallPage, largePage);
        }
        if (stride != 0 && (i % stride == 0 || i + 1 == program.ops.size())) {
            m.timeline.push_back({i, u64(stats.allocated_bytes[kAggregate].current), u64(stats.reserved_bytes[kAggregate].current)});
        }
    }
    if (observer != nullptr) observer->finish(allocator, result);
    if (result.error) m.error = result.error->message;
    for (const ProgramOom& oom : result.ooms) m.ooms.push_back({oom.opIndex, oom.message});
    m.ops = result.opsRun;
    m.stats = allocator.stats();
    m.events = sink.events;
    m.cudaMallocs = sink.mallocs;
    m.cudaFrees = sink.frees;
    m.maps = sink.maps;
    m.unmaps = sink.unmaps;
    m.gcReleases = sink.gc;
    m.retries = u64(m.stats.num_alloc_retries);
    m.peakAllocated = u64(m.stats.allocated_bytes[kAggregate].peak);
    m.peakReserved = u64(m.stats.reserved_bytes[kAggregate].peak);
    m.finalAllocated = u64(m.stats.allocated_bytes[kAggregate].current);
    m.finalReserved = u64(m.stats.reserved_bytes[kAggregate].current);
    m.atEnd = FragmentationMetrics::of(allocator.segments(), smallPage, largePage);
    if (!m.atPeak) m.atPeak = m.atEnd;  // reserved never grew (or no snapshots asked for)
    m.allocatorUs = options.cost.nativeUs(m.allocFreeOps, config.config.expandableSegments, m.cudaMallocs,
                                          m.cudaFrees, m.maps, m.unmaps);
    return m;
}

}  // namespace

RunMetrics ComparisonEngine::runOne(const Program& program, const CompareConfig& config, const CompareDevice& device,
                                    const CompareOptions& options) {
    RunMetrics m = config.config.backend == Backend::CudaMallocAsync ? runAsync(program, config, device, options)
                                                                     : runNative(program, config, device, options);
    m.label = config.label.empty() ? "default" : config.label;
    m.configText = formatConfig(config.config);
    return m;
}

std::vector<RunMetrics> ComparisonEngine::compare(const Program& program, const std::vector<CompareConfig>& configs,
                                                  const CompareDevice& device, const CompareOptions& options) {
    std::vector<RunMetrics> results(configs.size());
    unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    threads = std::min<unsigned>(threads, static_cast<unsigned>(configs.size()));
    std::atomic<std::size_t> next{0};
    std::vector<std::exception_ptr> errors(configs.size());
    CompareOptions shared = options;
    shared.sink = nullptr;  // one sink cannot take events from parallel runs
    shared.deviceMemory = nullptr;
    shared.opHook = nullptr;
    shared.observer = nullptr;
    shared.observerFor = nullptr;
    std::vector<RunObserver*> observers(configs.size(), nullptr);
    if (options.observerFor) {
        for (std::size_t i = 0; i < configs.size(); ++i) observers[i] = options.observerFor(i, configs[i]);
    }
    // Each run owns its device and allocator; the program is shared read-only.
    auto worker = [&] {
        for (std::size_t i = next++; i < configs.size(); i = next++) {
            try {
                if (observers[i] == nullptr) {
                    results[i] = runOne(program, configs[i], device, shared);
                } else {
                    CompareOptions observed = shared;
                    observed.observer = observers[i];
                    results[i] = runOne(program, configs[i], device, observed);
                }
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    if (threads <= 1) {
        worker();
    } else {
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
        for (std::thread& t : pool) t.join();
    }
    for (const std::exception_ptr& e : errors) {
        if (e) std::rethrow_exception(e);
    }
    return results;
}

}  // namespace allocscope::alloc
