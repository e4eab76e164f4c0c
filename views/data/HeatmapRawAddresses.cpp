#include "views/data/HeatmapRawAddresses.h"

#include <algorithm>
#include <cmath>

namespace allocscope::views {

HeatmapData toRawAddresses(const HeatmapData& squeezed) {
    if (!squeezed.isValid() || squeezed.rawAddresses || squeezed.ranges.empty()) return squeezed;
    // The squeezed axis: each range's start in address space and its offset on the axis.
    const quint64 low = squeezed.ranges.front().start;
    quint64 high = low;
    for (const AddressRange& r : squeezed.ranges) high = std::max(high, r.start + r.size);
    const double squeezedRowBytes = static_cast<double>(squeezed.axisBytes()) / squeezed.addressBins;
    const int rows = squeezed.addressBins;
    const double rawRowBytes = static_cast<double>(high - low) / rows;
    if (squeezedRowBytes <= 0 || rawRowBytes <= 0) return squeezed;

    // For every raw row: which squeezed rows its bytes come from, and what share of the raw row
    // each contributes. Built once, applied to every column.
    struct Source {
        int squeezedRow;
        double weight;
    };
    std::vector<std::vector<Source>> sources(static_cast<std::size_t>(rows));
    double offset = 0;
    for (const AddressRange& range : squeezed.ranges) {
        const double start = static_cast<double>(range.start - low);
        const double end = start + static_cast<double>(range.size);
        for (int r = std::clamp(static_cast<int>(start / rawRowBytes), 0, rows - 1); r < rows; ++r) {
            const double a = std::max(start, r * rawRowBytes);
            const double b = std::min(end, (r + 1) * rawRowBytes);
            if (a >= end) break;
            if (b <= a) continue;
            // [a, b) in address space is [offset + a - start, offset + b - start) on the squeezed axis.
            const double sa = offset + (a - start);
            const double sb = offset + (b - start);
            for (int k = std::clamp(static_cast<int>(sa / squeezedRowBytes), 0, squeezed.addressBins - 1); k < squeezed.addressBins; ++k) {
                const double lo = std::max(sa, k * squeezedRowBytes);
                const double hi = std::min(sb, (k + 1) * squeezedRowBytes);
                if (lo >= sb) break;
                if (hi > lo) sources[static_cast<std::size_t>(r)].push_back({k, (hi - lo) / rawRowBytes});
            }
        }
        offset += static_cast<double>(range.size);
    }

    HeatmapData raw;
    raw.timeBins = squeezed.timeBins;
    raw.addressBins = rows;
    raw.columnFirstEvent = squeezed.columnFirstEvent;
    raw.eventCount = squeezed.eventCount;
    raw.ranges = {AddressRange{low, high - low, 0}};
    raw.rawAddresses = true;
    raw.cells.assign(squeezed.cells.size(), HeatCell{});
    for (int t = 0; t < raw.timeBins; ++t) {
        for (int r = 0; r < rows; ++r) {
            double shares[kHeatStateCount] = {};
            for (const Source& s : sources[static_cast<std::size_t>(r)]) {
                const HeatCell& in = squeezed.cell(t, s.squeezedRow);
                for (int k = 0; k < kHeatStateCount; ++k) shares[k] += in[static_cast<std::size_t>(k)] * s.weight;
            }
            // Rounded cumulatively so a cell's shares never add up to more than 255.
            HeatCell& out = raw.cells[static_cast<std::size_t>(t) * static_cast<std::size_t>(rows) + static_cast<std::size_t>(r)];
            double sum = 0;
            long previous = 0;
            for (int k = 0; k < kHeatStateCount; ++k) {
                sum += shares[k];
                const long upTo = std::lround(std::min(255.0, sum));
                out[static_cast<std::size_t>(k)] = static_cast<quint8>(std::max(0L, upTo - previous));
                previous = std::max(previous, upTo);
            }
        }
    }
    return raw;
}

}  // namespace allocscope::views
