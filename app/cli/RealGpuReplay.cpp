#include "app/cli/RealGpuReplay.h"

#include <exception>
#include <ostream>

#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/CudaProgramRun.h"
#endif

namespace allocscope::cli {

RealGpuReplay::RealGpuReplay(const ResolvedDevice& device, alloc::ReplayOptions& options) : device_(device) {
    if (!device_.real()) return;
    tee_.add(&captured_);
    if (options.sink != nullptr) tee_.add(options.sink);
    options.sink = &tee_;
}

bool RealGpuReplay::finish(const alloc::ReplayOptions& options, std::int64_t traceDevice, alloc::ReplayResult& result,
                           std::ostream& report, std::string& error) {
    if (!device_.real()) return true;
#ifdef ALLOCSCOPE_HAVE_CUDA
    try {
        alloc::CudaProgramRunOptions run;
        run.device = *device_.cudaIndex;
        run.touch = device_.touch;
        run.config = options.config;
        run.memoryFraction = options.memoryFraction;
        run.totalMemory = options.totalMemory;
        run.otherMemory = options.otherMemory;
        run.simulatedEvents = &captured_.events;
        run.summaryDevice = static_cast<int>(traceDevice);
        const alloc::CudaProgramRunResult gpu = alloc::CudaProgramRun::run(result.program, run);
        const alloc::CudaDeviceCounters& c = gpu.counters;
        report << "  ran on " << device_.description() << ": " << gpu.program.opsRun << " ops, " << c.cudaMallocCalls
               << " cudaMalloc, " << c.cudaFreeCalls << " cudaFree, " << c.reservations << " reservations, "
               << c.pagesMapped << " pages mapped, peak held " << c.peakHeldBytes << " B, memory "
               << (device_.touch ? "touched" : "not touched (--no-touch)") << "\n";
        if (!gpu.eventDifference.empty() || gpu.oracleMisses != 0 || !gpu.program.ok()) {
            error = "the run on " + device_.name + " decided differently from the simulated replay: " +
                    (gpu.program.ok() ? std::string() : gpu.program.error->message + "; ") +
                    (gpu.eventDifference.empty() ? std::string("events identical") : gpu.eventDifference) + "; " +
                    std::to_string(gpu.oracleMisses) + " address requests unanswered";
            if (c.realOomDivergences != 0) {
                error += "; " + std::to_string(c.realOomDivergences) + " allocation(s) failed only on the real GPU";
            }
            return false;
        }
        const alloc::CudaStreamEventCounters& se = gpu.streamEvents;
        if (se.streams != 0 || se.eventsRecorded != 0) {
            report << "  streams: " << se.streams << " created, " << se.uses << " record_stream uses written, "
                   << se.eventsRecorded << " events recorded at frees (" << se.eventsDone << " complete when the program "
                   << "completed the free, " << se.eventsWaited << " waited for, "
                   << se.eventsRecorded - se.eventsDone - se.eventsWaited << " still pending at the end)\n";
        }
        report << "  decisions identical to the simulated replay (" << gpu.events << " events); real-address order: "
               << c.orderDisagreements << " of " << gpu.newRanges
               << " new segments would sit elsewhere among the live ones on the raw pointers\n";
        result.stats = gpu.stats;
        result.segments = gpu.segments;
        result.summary = gpu.summary;
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
#else
    (void)options, (void)traceDevice, (void)result, (void)report;
    error = "no GPU: built without CUDA support";
    return false;
#endif
}

}  // namespace allocscope::cli
