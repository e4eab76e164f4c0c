#include "allocator/replay/MemoryLimit.h"

#include <sstream>

#include "allocator/core/FormatSize.h"

namespace allocscope::alloc {
namespace {

std::string fractionText(double f) {
    std::ostringstream out;
    out.precision(6);
    out << f;
    return out.str();
}

}  // namespace

MemoryLimit MemoryLimit::at(std::uint64_t limit) const {
    MemoryLimit m = *this;
    m.bytes = limit;
    if (cause == Cause::MemoryFraction) {
        // Half a byte above: (size_t)(fraction * total) lands on `limit` whatever the rounding.
        m.memoryFraction = (static_cast<double>(limit) + 0.5) / static_cast<double>(totalMemory);
    } else {
        m.memoryFraction.reset();
        m.otherMemory = totalMemory > limit ? totalMemory - limit : 0;
    }
    return m;
}

std::string MemoryLimit::describe() const {
    std::ostringstream out;
    const std::string device = deviceName + " (" + std::to_string(totalMemory) + " B" +
                               (memoryFraction ? ", memory fraction " + fractionText(*memoryFraction) : std::string()) + ")";
    switch (source) {
        case Source::Inferred:
            out << "limit inferred from the OOM at op " << oomOp.value_or(0) << ": " << formatSize(bytes) << " ("
                << bytes << " B), between " << formatSize(low) << " and " << formatSize(high) << " (" << low << " to "
                << high << " B); "
                << (cause == Cause::MemoryFraction ? "a memory fraction stopped the allocator: the driver still had "
                                                   : "the device was full: the driver had only ")
                << formatSize(deviceFree) << " free for a " << formatSize(requested) << " request; picked " << pick
                << "; replayed on " << device;
            break;
        case Source::Explicit:
            out << "limit: " << formatSize(bytes) << " as given, on " << device;
            if (oomEntry) out << " (the recorded OOM is not used to infer one)";
            break;
        case Source::Unreproduced:
            out << "limit not inferred: " << pick << " (trace entry " << oomEntry.value_or(0)
                << ", device_free " << formatSize(deviceFree) << "); replayed on " << device;
            break;
        case Source::Preset:
            out << "no OOM recorded: the limit is at least " << formatSize(low) << " (the recorded peak reserved); the GPU stays "
                << device;
            break;
    }
    return out.str();
}

}  // namespace allocscope::alloc
