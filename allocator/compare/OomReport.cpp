#include "allocator/compare/OomReport.h"

#include <cstdio>
#include <sstream>

#include "allocator/compare/CompareReport.h"
#include "allocator/core/FormatSize.h"
#include "allocator/core/HexAddress.h"

namespace allocscope::alloc {
namespace {

std::string signedSize(std::int64_t bytes) {
    return bytes < 0 ? "-" + formatSize(static_cast<std::uint64_t>(-bytes)) : formatSize(static_cast<std::uint64_t>(bytes));
}

// Left-aligned in `width` columns, and always one space before the next column.
std::string padded(std::string text, std::size_t width) {
    text.append(text.size() < width ? width - text.size() : 1, ' ');
    return text;
}

std::string limitSourceName(MemoryLimit::Source source) {
    switch (source) {
        case MemoryLimit::Source::Preset: return "preset";
        case MemoryLimit::Source::Explicit: return "given";
        case MemoryLimit::Source::Inferred: return "inferred";
        case MemoryLimit::Source::Unreproduced: return "unreproduced";
    }
    return "?";
}

}  // namespace

std::string OomReport::text(const OomAnswer& a) {
    std::ostringstream out;
    out << a.headline << "\n\n";
    out << "OOM at op " << a.opIndex << " (trace entry " << a.entryIndex << "), device " << a.device << ", stream "
        << hexAddress(a.stream) << ": " << formatSize(a.requested) << " requested (a " << formatSize(a.allocSize)
        << " segment), the driver had " << formatSize(a.deviceFree) << " free\n";
    out << a.limit.describe() << "\n";
    out << "at the failure: reserved " << formatSize(a.reserved) << ", allocated " << formatSize(a.allocated)
        << ", cached free " << formatSize(a.cachedFree) << "; largest free block " << formatSize(a.largestFree) << " for the "
        << formatSize(a.requested) << " request: "
        << (a.fragmented ? "fragmentation (enough free cached memory, but in no block large enough)"
                         : "really full (the free cached memory could not serve it even as one block)")
        << "\n";
    out << "held by " << a.holderCount << " live blocks" << (a.holders.empty() ? "" : "; the largest:") << "\n";
    for (const OomHolder& h : a.holders) {
        out << "  " << hexAddress(h.address) << "  " << formatSize(h.size) << " (requested " << formatSize(h.requested)
            << "), stream " << hexAddress(h.stream) << "\n";
        if (h.frames.empty()) out << "      (no stack recorded)\n";
        for (const std::string& f : h.frames) out << "      " << f << "\n";
    }
    // A snapshot keeps neither the device's total memory nor the process's other memory: the
    // message's figures for those two come from the inferred device.
    out << "PyTorch's message, as the replay rebuilds it (total capacity and non-PyTorch memory are estimates):\n  " << (a.pytorchMessage.empty() ? "(not reproduced by the replay)" : a.pytorchMessage) << "\n";
    out << "what-if at the " << formatSize(a.limit.bytes) << " limit";
    if (a.limit.isInterval()) out << " (and at " << formatSize(a.limit.low) << " and " << formatSize(a.limit.high) << ")";
    out << ":\n";
    out << "  " << padded("config", 58) << padded("OOM", 5) << padded("at op", 9) << padded("peak reserved", 15)
        << padded("headroom", 12) << "verdict\n";
    for (const OomWhatIfRow& r : a.whatIf) {
        out << "  " << padded(r.config + (r.recorded ? " (recorded)" : ""), 58) << padded(r.oom ? "yes" : "no", 5)
            << padded(r.oomOp ? std::to_string(*r.oomOp) : "-", 9) << padded(formatSize(r.peakReserved), 15)
            << padded(signedSize(r.headroom), 12) << r.verdict << "\n";
    }
    return out.str();
}

std::string OomReport::json(const OomAnswer& a) {
    const auto str = [](const std::string& s) { return CompareReport::jsonString(s); };
    std::ostringstream out;
    out << "{\"headline\":" << str(a.headline) << ",\"entry\":" << a.entryIndex << ",\"op\":" << a.opIndex
        << ",\"device\":" << a.device << ",\"stream\":" << a.stream << ",\"requested\":" << a.requested
        << ",\"alloc_size\":" << a.allocSize << ",\"device_free\":" << a.deviceFree;
    const MemoryLimit& l = a.limit;
    out << ",\"limit\":{\"source\":" << str(limitSourceName(l.source)) << ",\"cause\":"
        << str(l.cause == MemoryLimit::Cause::MemoryFraction ? "memory_fraction" : "device_full") << ",\"bytes\":" << l.bytes
        << ",\"low\":" << l.low << ",\"high\":" << l.high << ",\"pick\":" << str(l.pick) << ",\"gpu\":" << str(l.deviceName)
        << ",\"total_memory\":" << l.totalMemory << ",\"other_memory\":" << l.otherMemory << ",\"memory_fraction\":";
    if (l.memoryFraction) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", *l.memoryFraction);
        out << buf;
    } else {
        out << "null";
    }
    out << ",\"text\":" << str(l.describe()) << "}";
    out << ",\"reserved\":" << a.reserved << ",\"allocated\":" << a.allocated << ",\"cached_free\":" << a.cachedFree
        << ",\"largest_free\":" << a.largestFree << ",\"fragmented\":" << (a.fragmented ? "true" : "false")
        << ",\"holder_count\":" << a.holderCount << ",\"holders\":[";
    for (std::size_t i = 0; i < a.holders.size(); ++i) {
        const OomHolder& h = a.holders[i];
        out << (i ? "," : "") << "{\"address\":" << h.address << ",\"size\":" << h.size << ",\"requested\":" << h.requested
            << ",\"stream\":" << h.stream << ",\"segment\":" << h.segment << ",\"frames\":[";
        for (std::size_t f = 0; f < h.frames.size(); ++f) out << (f ? "," : "") << str(h.frames[f]);
        out << "]}";
    }
    out << "],\"pytorch_message\":" << str(a.pytorchMessage) << ",\"what_if\":[";
    for (std::size_t i = 0; i < a.whatIf.size(); ++i) {
        const OomWhatIfRow& r = a.whatIf[i];
        out << (i ? "," : "") << "{\"config\":" << str(r.config) << ",\"recorded\":" << (r.recorded ? "true" : "false")
            << ",\"oom\":" << (r.oom ? "true" : "false") << ",\"oom_op\":" << (r.oomOp ? std::to_string(*r.oomOp) : "null")
            << ",\"peak_reserved\":" << r.peakReserved << ",\"headroom\":" << r.headroom
            << ",\"oom_at_low\":" << (r.oomAtLow ? "true" : "false") << ",\"oom_at_high\":" << (r.oomAtHigh ? "true" : "false")
            << ",\"threshold\":" << (r.threshold ? std::to_string(*r.threshold) : "null") << ",\"verdict\":" << str(r.verdict)
            << "}";
    }
    out << "]}\n";
    return out.str();
}

}  // namespace allocscope::alloc
