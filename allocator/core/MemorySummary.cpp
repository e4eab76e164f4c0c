#include "allocator/core/MemorySummary.h"

#include <array>
#include <cstdio>
#include <string_view>
#include <vector>

namespace allocscope::alloc {
namespace {

// Python's floor division (the summary divides with //).
std::int64_t floorDiv(std::int64_t value, std::int64_t divisor) {
    std::int64_t q = value / divisor;
    if ((value % divisor != 0) && ((value < 0) != (divisor < 0))) --q;
    return q;
}

// _format_size: the unit follows the "preferred" value (the "all" row of the same column).
std::string formatSizeCell(std::int64_t size, std::int64_t preferred) {
    static constexpr std::array<std::string_view, 6> kPrefixes = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::string_view prefix = kPrefixes[0];
    double pref = static_cast<double>(preferred);
    for (std::size_t i = 1; i < kPrefixes.size(); ++i) {
        if (pref < 768.0 * 1024.0) break;
        prefix = kPrefixes[i];
        size = floorDiv(size, 1024);
        pref /= 1024.0;
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%6lld %.*s", static_cast<long long>(size),
                  static_cast<int>(prefix.size()), prefix.data());
    return buffer;
}

// _format_count: " ", "K", "M" in steps of 1000 from 750,000.
std::string formatCountCell(std::int64_t count, std::int64_t preferred) {
    static constexpr std::array<std::string_view, 3> kPrefixes = {" ", "K", "M"};
    std::string_view prefix = kPrefixes[0];
    double pref = static_cast<double>(preferred);
    for (std::size_t i = 1; i < kPrefixes.size(); ++i) {
        if (pref < 750.0 * 1000.0) break;
        prefix = kPrefixes[i];
        count = floorDiv(count, 1000);
        pref /= 1000.0;
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%7lld %.*s ", static_cast<long long>(count),
                  static_cast<int>(prefix.size()), prefix.data());
    return buffer;
}

using Formatter = std::string (*)(std::int64_t, std::int64_t);

std::string row(std::string_view name, const Stat& stat, const Stat& preferred, Formatter format) {
    char nameCell[64];
    std::snprintf(nameCell, sizeof nameCell, " %-21.*s | ", static_cast<int>(name.size()), name.data());
    return std::string(nameCell) + format(stat.current, preferred.current) + " | " +
           format(stat.peak, preferred.peak) + " | " + format(stat.allocated, preferred.allocated) + " | " +
           format(stat.freed, preferred.freed) + " ";
}

std::string leftAligned(std::int64_t value, int width) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%-*lld", width, static_cast<long long>(value));
    return buffer;
}

}  // namespace

std::string formatMemorySummary(const DeviceStats& stats, int device, bool abbreviated) {
    struct Metric {
        const StatArray DeviceStats::*member;
        std::string_view name;
        Formatter format;
    };
    const std::array<Metric, 9> metrics = {{
        {&DeviceStats::allocated_bytes, "Allocated memory", formatSizeCell},
        {&DeviceStats::active_bytes, "Active memory", formatSizeCell},
        {&DeviceStats::requested_bytes, "Requested memory", formatSizeCell},
        {&DeviceStats::reserved_bytes, "GPU reserved memory", formatSizeCell},
        {&DeviceStats::inactive_split_bytes, "Non-releasable memory", formatSizeCell},
        {&DeviceStats::allocation, "Allocations", formatCountCell},
        {&DeviceStats::active, "Active allocs", formatCountCell},
        {&DeviceStats::segment, "GPU reserved segments", formatCountCell},
        {&DeviceStats::inactive_split, "Non-releasable allocs", formatCountCell},
    }};
    const std::string equals(75, '=');
    const std::string dashes(75, '-');
    std::vector<std::string> lines;
    lines.push_back(equals);
    lines.push_back(std::string(18, ' ') + "PyTorch CUDA memory summary, device ID " + leftAligned(device, 17) + " ");
    lines.push_back(dashes);
    lines.push_back(std::string(12, ' ') + "CUDA OOMs: " + leftAligned(stats.num_ooms, 12) + " |" + std::string(8, ' ') +
                    "cudaMalloc retries: " + leftAligned(stats.num_alloc_retries, 8) + "  ");
    lines.push_back(equals);
    lines.push_back("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
    for (const Metric& metric : metrics) {
        lines.push_back(dashes);
        const StatArray& array = stats.*metric.member;
        lines.push_back(row(metric.name, array[kAggregate], array[kAggregate], metric.format));
        if (!abbreviated) {
            lines.push_back(row("      from large pool", array[kLargePool], array[kAggregate], metric.format));
            lines.push_back(row("      from small pool", array[kSmallPool], array[kAggregate], metric.format));
        }
    }
    lines.push_back(dashes);
    lines.push_back(row("Oversize allocations", stats.oversize_allocations, stats.oversize_allocations, formatCountCell));
    lines.push_back(dashes);
    lines.push_back(row("Oversize GPU segments", stats.oversize_segments, stats.oversize_segments, formatCountCell));
    lines.push_back(equals);
    std::string out = "|";
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i > 0) out += "|\n|";
        out += lines[i];
    }
    out += "|\n";
    return out;
}

}  // namespace allocscope::alloc
