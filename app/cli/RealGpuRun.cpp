#include "app/cli/RealGpuRun.h"

#include <exception>
#include <optional>
#include <unordered_map>

#include "allocator/config/ConfigParser.h"

#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/SimulatedDevice.h"
#include "allocator/device/cuda/CudaAsyncBackend.h"
#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaStreamEvents.h"
#endif

namespace allocscope::cli {

#ifdef ALLOCSCOPE_HAVE_CUDA
namespace {

// The block each live tensor got: the address of the alloc event its Alloc op caused.
class TensorAddresses final : public alloc::EventSink {
public:
    explicit TensorAddresses(const alloc::Program& program) : program_(program) {}
    void onEvent(const alloc::Event& e) override {
        if (e.action == alloc::EventAction::Alloc && e.opIndex < program_.ops.size() &&
            program_.ops[e.opIndex].kind == alloc::OpKind::Alloc) {
            byId_[program_.ops[e.opIndex].id] = e.address;
        }
    }
    std::optional<std::uint64_t> of(std::uint64_t id) const {
        auto it = byId_.find(id);
        if (it == byId_.end()) return std::nullopt;
        return it->second;
    }
    void forget(std::uint64_t id) { byId_.erase(id); }

private:
    const alloc::Program& program_;
    std::unordered_map<std::uint64_t, std::uint64_t> byId_;
};

std::uint64_t u64(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

std::string touchText(const ResolvedDevice& device) {
    return device.touch ? "memory touched (cudaMemset of every new segment)" : "memory not touched (--no-touch)";
}

alloc::RunMetrics runAsyncOnGpu(const ResolvedDevice& device, const alloc::Program& program,
                                const alloc::CompareConfig& config, const alloc::CompareDevice& target,
                                std::string& notes) {
    alloc::CudaAsyncBackend backend(*device.cudaIndex);
    std::optional<double> fraction = target.memoryFraction;
    if (!fraction && config.config.perProcessMemoryFraction) fraction = config.config.perProcessMemoryFraction;
    if (fraction) backend.setMemoryFraction(*fraction);
    const alloc::CudaAsyncRunResult r = backend.run(program, device.touch);
    alloc::RunMetrics m;
    m.asyncBackend = true;
    m.ops = r.ops;
    m.allocFreeOps = r.allocs + r.frees + r.ooms + r.unknownFrees;
    m.stats = backend.stats();
    m.peakAllocated = u64(m.stats.allocated_bytes[alloc::kAggregate].peak);
    m.peakReserved = u64(m.stats.reserved_bytes[alloc::kAggregate].peak);
    m.peakReservedOp = r.peakReservedOp;
    m.finalAllocated = u64(m.stats.allocated_bytes[alloc::kAggregate].current);
    m.finalReserved = u64(m.stats.reserved_bytes[alloc::kAggregate].current);
    for (std::uint64_t op : r.oomOps) m.ooms.push_back({op, "CUDA out of memory (cudaMallocAsync refused the allocation)"});
    notes = "real GPU:          " + device.description() + ", cudaMallocAsync on the default memory pool, " +
            touchText(device) + "; " + std::to_string(r.allocs) + " cudaMallocAsync, " + std::to_string(r.frees) +
            " cudaFreeAsync\n";
    return m;
}

}  // namespace
#endif

bool runOnRealGpu(const ResolvedDevice& device, const alloc::Program& program, const alloc::CompareConfig& config,
                  const alloc::CompareDevice& target, alloc::CompareOptions options, alloc::RunMetrics& metrics,
                  std::string& notes, std::string& error) {
#ifdef ALLOCSCOPE_HAVE_CUDA
    if (!device.real()) {
        error = "no GPU: no real device was chosen (--gpu cuda:N)";
        return false;
    }
    try {
        if (config.config.backend == alloc::Backend::CudaMallocAsync) {
            metrics = runAsyncOnGpu(device, program, config, target, notes);
            metrics.label = config.label.empty() ? "default" : config.label;
            metrics.configText = alloc::formatConfig(config.config);
            return true;
        }
        alloc::SimulatedDevice decider(target.totalMemory, target.otherMemory, target.name);
        alloc::CudaDevice gpu(alloc::CudaDeviceOptions{*device.cudaIndex, device.touch, &decider});
        options.deviceMemory = &gpu;
        // Real streams and events follow the program (record_stream, pending frees); they find a
        // tensor's block through the allocator's alloc events.
        TensorAddresses addresses(program);
        alloc::TeeSink tee;
        tee.add(&addresses);
        if (options.sink != nullptr) tee.add(options.sink);
        options.sink = &tee;
        alloc::CudaStreamEvents streams(*device.cudaIndex, device.touch, [&](std::uint64_t id) -> std::optional<std::uint64_t> {
            const std::optional<std::uint64_t> address = addresses.of(id);
            return address ? gpu.realAddress(*address) : std::nullopt;
        });
        options.opHook = [&](const alloc::Op& op, bool applied) {
            if (applied) {
                streams.after(op);
                if (op.kind == alloc::OpKind::Free) addresses.forget(op.id);
            } else {
                streams.before(op);
            }
        };
        metrics = alloc::ComparisonEngine::runOne(program, config, target, options);
        const alloc::CudaDeviceCounters& c = gpu.counters();
        const alloc::CudaStreamEventCounters& se = streams.counters();
        const std::uint64_t newRanges = c.cudaMallocCalls + c.reservations;
        notes = "real GPU:          " + device.description() + ", " + touchText(device) + "; " +
                std::to_string(c.cudaMallocCalls) + " cudaMalloc, " + std::to_string(c.cudaFreeCalls) + " cudaFree, " +
                std::to_string(c.reservations) + " reservations, " + std::to_string(c.pagesMapped) +
                " pages mapped, peak held " + std::to_string(c.peakHeldBytes) + " B\n" +
                "real-address order: " + std::to_string(c.orderDisagreements) + " of " + std::to_string(newRanges) +
                " new segments would sit elsewhere among the live ones on the raw pointers (decisions here follow the "
                "simulated GPU of the same size)\n";
        if (se.streams != 0 || se.eventsRecorded != 0) {
            notes += "real streams:      " + std::to_string(se.streams) + " created, " + std::to_string(se.uses) +
                     " record_stream uses written, " + std::to_string(se.eventsRecorded) + " events recorded at frees (" +
                     std::to_string(se.eventsDone) + " complete when the program completed the free, " +
                     std::to_string(se.eventsWaited) + " waited for, " +
                     std::to_string(se.eventsRecorded - se.eventsDone - se.eventsWaited) + " still pending at the end)\n";
        }
        if (c.realOomDivergences != 0) {
            notes += "note: " + std::to_string(c.realOomDivergences) +
                     " allocation(s) the simulated GPU granted failed on the real one (its memory is shared)\n";
        }
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
#else
    (void)device, (void)program, (void)config, (void)target, (void)options, (void)metrics, (void)notes;
    error = "no GPU: built without CUDA support";
    return false;
#endif
}

}  // namespace allocscope::cli
