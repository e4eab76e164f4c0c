#pragma once
// Heatmap columns: the layout sampled at one event as address intervals, each in one HeatShare
// state (an allocated block becomes its requested part and its rounding waste), and the
// rasterisation of such samples onto a squeezed address axis (every range reserved in any sample
// laid end to end, gaps removed).
#include <cstdint>
#include <utility>
#include <vector>

#include "storage/session/SegmentStateModel.h"
#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

struct HeatmapInterval {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    HeatShare state = HeatShare::Inactive;  // never Unmapped: unmapped pages are not in the layout
    bool expandable = false;                // mapped pages of an expandable segment
};

struct HeatmapSample {
    std::uint64_t seq = 0;
    std::vector<HeatmapInterval> intervals;  // address order, adjacent same-kind merged
};

class HeatmapRaster {
public:
    static HeatmapSample sample(const SegmentStateModel& model, std::uint64_t seq);
    // Builds a grid of samples.size() columns and `rows` rows (fewer if the axis is smaller).
    // `axis`: the reserved ranges (sorted, disjoint, covering every sampled interval); when
    // null it is the union of the samples' intervals. An axis range that held expandable pages
    // in any sample belongs to an expandable reservation: where it is not mapped, it is Unmapped.
    static HeatmapGrid rasterize(const std::vector<HeatmapSample>& samples, int rows,
                                 const std::vector<std::pair<std::uint64_t, std::uint64_t>>* axis = nullptr);
};

}  // namespace allocscope::storage
