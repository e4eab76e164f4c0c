#pragma once
// `replay TRACE --gpu cuda:N`: the replay runs again on real GPU N with the simulated replay's
// decisions. The simulated replay (TraceReplayer) turns the trace into a program and decides every
// address (the recording's, or a placement model's in a what-if); its events are captured, then
// the same program runs through the caching allocator on CudaDevice in translation mode, a
// simulated GPU handing out those addresses in order while each decided segment is backed by the
// real pointer the driver gave. The GPU run's events must equal the simulated ones (else an
// error); the statistics, layout and memory_summary() reported become the GPU run's own. The
// report adds the device, the driver calls, and how often the real addresses would have ordered a
// new segment differently among the live ones.
//
//   RealGpuReplay gpu(device, options);   // before TraceReplayer::replay(trace, options)
//   ... result = TraceReplayer::replay(trace, options) ...
//   if (!gpu.finish(options, trace.device, result, report, error)) -> error (exit 1)
#include <iosfwd>
#include <string>

#include "allocator/core/EventSink.h"
#include "allocator/replay/TraceReplayer.h"
#include "app/cli/DeviceOptions.h"

namespace allocscope::cli {

class RealGpuReplay {
public:
    // On a real device, captures the replay's events (options.sink keeps receiving them too).
    // Does nothing for a simulated device. `options` must outlive this object.
    RealGpuReplay(const ResolvedDevice& device, alloc::ReplayOptions& options);
    RealGpuReplay(const RealGpuReplay&) = delete;
    RealGpuReplay& operator=(const RealGpuReplay&) = delete;

    bool active() const { return device_.real(); }
    // Runs the replayed program on the GPU and puts its results into `result`; writes the report
    // lines. true on a simulated device (nothing to do). false + error when the GPU cannot be
    // used, a CUDA call fails, or the GPU run decided differently from the simulated one.
    bool finish(const alloc::ReplayOptions& options, std::int64_t traceDevice, alloc::ReplayResult& result,
                std::ostream& report, std::string& error);

private:
    ResolvedDevice device_;
    alloc::VectorSink captured_;
    alloc::TeeSink tee_;
};

}  // namespace allocscope::cli
