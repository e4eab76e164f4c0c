#pragma once
// The heatmap on raw virtual addresses: the squeezed grid (reserved ranges laid end to end)
// redistributed over one axis from the lowest to the highest reserved address, gaps included.
// It shows where the segments really sit in the address space (and why the default view squeezes
// the gaps out: a few hundred MiB of segments spread over terabytes of address space are thin lines).
#include "views/data/HeatmapData.h"

namespace allocscope::views {

// `squeezed` must be valid and not already raw; the result has as many address bins, the same
// time bins, and rawAddresses set. Each raw cell's shares are the byte-weighted shares of the
// squeezed cells its addresses fall in (gap bytes count as not reserved).
HeatmapData toRawAddresses(const HeatmapData& squeezed);

}  // namespace allocscope::views
