#include "storage/session/HeatmapRaster.h"

#include <algorithm>

namespace allocscope::storage {

HeatmapSample HeatmapRaster::sample(const SegmentStateModel& model, std::uint64_t seq) {
    HeatmapSample out;
    out.seq = seq;
    out.intervals.reserve(model.blocks().size());
    for (const auto& [address, block] : model.blocks()) {
        const bool active = block.state != alloc::BlockState::Inactive;
        if (!out.intervals.empty() && out.intervals.back().end == address && out.intervals.back().active == active) {
            out.intervals.back().end = address + block.size;
        } else {
            out.intervals.push_back({address, address + block.size, active});
        }
    }
    return out;
}

HeatmapGrid HeatmapRaster::rasterize(const std::vector<HeatmapSample>& samples, int rows,
                                     const std::vector<std::pair<std::uint64_t, std::uint64_t>>* axis) {
    HeatmapGrid grid;
    // The axis: union of all reserved intervals of all samples (each sample's contiguous runs
    // merged first, whatever their kind, so the sort sees one range per run of segments).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    if (axis != nullptr) {
        ranges = *axis;
    } else {
        for (const HeatmapSample& s : samples) {
            for (const HeatmapInterval& i : s.intervals) {
                if (!ranges.empty() && ranges.back().second == i.start) ranges.back().second = i.end;
                else ranges.emplace_back(i.start, i.end);
            }
        }
        std::sort(ranges.begin(), ranges.end());
    }
    for (const auto& [start, end] : ranges) {
        if (!grid.axis.empty() && start <= grid.axis.back().address + grid.axis.back().size) {
            AxisRange& last = grid.axis.back();
            last.size = std::max(last.size, end - last.address);
        } else {
            grid.axis.push_back({start, end - start, 0});
        }
    }
    for (AxisRange& r : grid.axis) {
        r.offset = grid.axisBytes;
        grid.axisBytes += r.size;
    }
    grid.columns = static_cast<int>(samples.size());
    grid.rows = grid.axisBytes == 0 ? 0 : static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(rows, 1)), grid.axisBytes));
    grid.active.assign(static_cast<std::size_t>(grid.columns) * static_cast<std::size_t>(grid.rows), 0);
    grid.reserved.assign(grid.active.size(), 0);
    if (grid.rows == 0) {
        for (const HeatmapSample& s : samples) grid.columnEvents.push_back(s.seq);
        return grid;
    }
    const double rowBytes = static_cast<double>(grid.axisBytes) / grid.rows;
    std::vector<double> active(static_cast<std::size_t>(grid.rows));
    std::vector<double> reserved(static_cast<std::size_t>(grid.rows));
    for (std::size_t c = 0; c < samples.size(); ++c) {
        grid.columnEvents.push_back(samples[c].seq);
        std::fill(active.begin(), active.end(), 0.0);
        std::fill(reserved.begin(), reserved.end(), 0.0);
        std::size_t axisIndex = 0;
        for (const HeatmapInterval& i : samples[c].intervals) {
            while (axisIndex + 1 < grid.axis.size() && grid.axis[axisIndex].address + grid.axis[axisIndex].size <= i.start) ++axisIndex;
            const AxisRange& range = grid.axis[axisIndex];
            const double a = static_cast<double>(range.offset + (i.start - range.address));
            const double b = a + static_cast<double>(i.end - i.start);
            auto first = static_cast<std::size_t>(a / rowBytes);
            const auto last = std::min(static_cast<std::size_t>(b / rowBytes), active.size() - 1);
            for (std::size_t r = std::min(first, active.size() - 1); r <= last; ++r) {
                const double lo = std::max(a, static_cast<double>(r) * rowBytes);
                const double hi = std::min(b, static_cast<double>(r + 1) * rowBytes);
                if (hi <= lo) continue;
                reserved[r] += hi - lo;
                if (i.active) active[r] += hi - lo;
            }
        }
        for (std::size_t r = 0; r < active.size(); ++r) {
            const std::size_t cell = c * active.size() + r;
            grid.active[cell] = static_cast<std::uint8_t>(std::min(255.0, active[r] / rowBytes * 255.0 + 0.5));
            grid.reserved[cell] = static_cast<std::uint8_t>(std::min(255.0, reserved[r] / rowBytes * 255.0 + 0.5));
        }
    }
    return grid;
}

}  // namespace allocscope::storage
