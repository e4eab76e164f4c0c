#include "app/cli/TraceLimit.h"

namespace allocscope::cli {

bool limitGiven(const ResolvedDevice& device, const DeviceOptions& options) {
    return !device.defaulted || options.memoryFraction.has_value();
}

alloc::MemoryLimit traceLimit(const alloc::RecordedTrace& trace, const alloc::AllocatorConfig& recorded,
                              const ResolvedDevice& device, const DeviceOptions& options) {
    // The device a trace runs on without inference (a trace has no default preset of its own).
    const alloc::CompareDevice target = simulatedTarget(device, nullptr, options);
    const alloc::LimitDevice chosen{target.name, target.totalMemory, target.otherMemory, target.memoryFraction};
    if (limitGiven(device, options)) return alloc::LimitInference::given(trace, chosen);
    alloc::ReplayOptions base;
    base.config = recorded;
    return alloc::LimitInference::infer(trace, base, chosen);
}

alloc::CompareDevice compareDeviceOf(const alloc::MemoryLimit& limit) {
    alloc::CompareDevice d;
    d.name = limit.deviceName;
    d.totalMemory = limit.totalMemory;
    d.otherMemory = limit.otherMemory;
    d.memoryFraction = limit.memoryFraction;
    return d;
}

}  // namespace allocscope::cli
