#include "storage/session/HeatmapRaster.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace allocscope::storage {

namespace {

// std::lround for 0 <= x < 2^52 (halves away from zero), without the library call that cost as
// much as the rest of the raster: subtracting the integer part of a double is exact there.
long roundNonNegative(double x) {
    const auto whole = static_cast<long>(x);
    return x - static_cast<double>(whole) >= 0.5 ? whole + 1 : whole;
}

void append(HeatmapSample& out, std::uint64_t start, std::uint64_t end, HeatShare state, bool expandable) {
    if (end <= start) return;
    if (!out.intervals.empty()) {
        HeatmapInterval& last = out.intervals.back();
        if (last.end == start && last.state == state && last.expandable == expandable) {
            last.end = end;
            return;
        }
    }
    out.intervals.push_back({start, end, state, expandable});
}

constexpr std::size_t index(HeatShare s) { return static_cast<std::size_t>(s); }

}  // namespace

HeatmapSample HeatmapRaster::sample(const SegmentStateModel& model, std::uint64_t seq) {
    HeatmapSample out;
    out.seq = seq;
    out.intervals.reserve(model.blocks().size());
    for (const auto& [address, block] : model.blocks()) {
        const std::uint64_t end = address + block.size;
        switch (block.state) {
        case alloc::BlockState::ActiveAllocated: {
            // The program's bytes first, then the rest of the block (how PyTorch hands it out).
            const std::uint64_t asked = address + std::min(block.requested, block.size);
            append(out, address, asked, HeatShare::Requested, block.expandable);
            append(out, asked, end, HeatShare::RoundingWaste, block.expandable);
            break;
        }
        case alloc::BlockState::ActivePendingFree:
            append(out, address, end, HeatShare::PendingFree, block.expandable);
            break;
        case alloc::BlockState::Inactive:
            append(out, address, end, HeatShare::Inactive, block.expandable);
            break;
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
    for (const HeatmapSample& s : samples) grid.columnEvents.push_back(s.seq);
    grid.rows = grid.axisBytes == 0 ? 0 : static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(rows, 1)), grid.axisBytes));
    for (auto& plane : grid.shares) plane.assign(grid.cellCount(), 0);
    if (grid.rows == 0) return grid;

    const double rowBytes = static_cast<double>(grid.axisBytes) / grid.rows;
    const auto rowCount = static_cast<std::size_t>(grid.rows);
    // Spreads the axis interval [a, b) (squeezed-axis byte positions) over the rows it covers.
    auto spread = [&](double a, double b, auto&& add) {
        const auto first = std::min(static_cast<std::size_t>(a / rowBytes), rowCount - 1);
        const auto last = std::min(static_cast<std::size_t>(b / rowBytes), rowCount - 1);
        for (std::size_t r = first; r <= last; ++r) {
            const double lo = std::max(a, static_cast<double>(r) * rowBytes);
            const double hi = std::min(b, static_cast<double>(r + 1) * rowBytes);
            if (hi > lo) add(r, hi - lo);
        }
    };
    auto rangeOf = [&](std::uint64_t address) {
        auto it = std::upper_bound(grid.axis.begin(), grid.axis.end(), address,
                                   [](std::uint64_t a, const AxisRange& r) { return a < r.address; });
        return it == grid.axis.begin() ? std::size_t{0} : static_cast<std::size_t>(it - grid.axis.begin()) - 1;
    };

    // Bytes per row that belong to expandable reservations: the part of them not mapped at a
    // column's event is Unmapped there.
    std::vector<bool> expandableRange(grid.axis.size(), false);
    for (const HeatmapSample& s : samples) {
        for (const HeatmapInterval& i : s.intervals) {
            if (i.expandable) expandableRange[rangeOf(i.start)] = true;
        }
    }
    std::vector<double> expandableBytes(rowCount, 0.0);
    for (std::size_t k = 0; k < grid.axis.size(); ++k) {
        if (!expandableRange[k]) continue;
        const double a = static_cast<double>(grid.axis[k].offset);
        spread(a, a + static_cast<double>(grid.axis[k].size), [&](std::size_t r, double bytes) { expandableBytes[r] += bytes; });
    }

    std::array<std::vector<double>, kHeatShareCount> bytes;
    for (auto& b : bytes) b.resize(rowCount);
    for (std::size_t c = 0; c < samples.size(); ++c) {
        for (auto& b : bytes) std::fill(b.begin(), b.end(), 0.0);
        std::vector<double>& mappedExpandable = bytes[index(HeatShare::Unmapped)];  // filled, then inverted
        std::size_t axisIndex = 0;
        for (const HeatmapInterval& i : samples[c].intervals) {
            while (axisIndex + 1 < grid.axis.size() && grid.axis[axisIndex].address + grid.axis[axisIndex].size <= i.start) ++axisIndex;
            const AxisRange& range = grid.axis[axisIndex];
            const double a = static_cast<double>(range.offset + (i.start - range.address));
            const double b = a + static_cast<double>(i.end - i.start);
            std::vector<double>& target = bytes[index(i.state)];
            spread(a, b, [&](std::size_t r, double n) {
                target[r] += n;
                if (i.expandable) mappedExpandable[r] += n;
            });
        }
        for (std::size_t r = 0; r < rowCount; ++r) mappedExpandable[r] = std::max(0.0, expandableBytes[r] - mappedExpandable[r]);
        // Rounded cumulatively, so that a cell's shares never add up to more than 255.
        for (std::size_t r = 0; r < rowCount; ++r) {
            double sum = 0;
            long previous = 0;
            for (std::size_t s = 0; s < bytes.size(); ++s) {
                sum += bytes[s][r];
                const long upTo = roundNonNegative(std::min(255.0, sum / rowBytes * 255.0));
                grid.shares[s][c * rowCount + r] = static_cast<std::uint8_t>(std::max(0L, upTo - previous));
                previous = std::max(previous, upTo);
            }
        }
    }
    return grid;
}

}  // namespace allocscope::storage
