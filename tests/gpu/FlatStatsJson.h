#pragma once
// Writes DeviceStats as one flat JSON object {"key": value, ...} (the 122 keys, sorted), the form
// tests/gpu/compare_stats.py reads. Header-only, used by the GPU benchmarks and checks.
#include <fstream>
#include <string>

#include "allocator/core/DeviceStats.h"

namespace allocscope::gpu {

// false when the file cannot be written (the caller says so).
inline bool writeFlatStatsJson(const std::string& path, const alloc::DeviceStats& stats) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return false;
    out << "{";
    bool first = true;
    for (const auto& [key, value] : stats.flatten()) {
        out << (first ? "" : ",") << "\n  \"" << key << "\": " << value;
        first = false;
    }
    out << "\n}\n";
    return static_cast<bool>(out);
}

}  // namespace allocscope::gpu
