#pragma once
// The time x address occupancy grid of a run window. Wide windows are resampled from the grid
// precomputed while recording (whole-run address axis); narrow ones are rebuilt exactly by
// replaying the window from the nearest keyframe, with the axis made of the ranges reserved
// inside the window.
#include <cstdint>
#include <functional>
#include <vector>

#include "storage/session/HeatmapRaster.h"

#include "storage/session/SessionReader.h"
#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

class HeatmapQuery {
public:
    // Windows longer than this come from the stored grid when it has at least
    // min(columns, 64) columns inside the window; shorter ones are replayed exactly.
    static constexpr std::uint64_t kReplayLimit = 250'000;
    static HeatmapGrid build(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last, int columns, int rows,
                             std::uint64_t replayLimit = kReplayLimit);
    // The stored grid as recorded (1,024..2,048 columns); nullopt for runs without one.
    static std::optional<HeatmapGrid> stored(SessionReader& reader, int run);
    // The layout sampled right after each of `seqs` (ascending, within the run), replayed once
    // from the keyframe nearest the first. `progress(seq)` is called after each chunk of events
    // replayed; when it returns false the replay stops and the samples so far are returned.
    static std::vector<HeatmapSample> sampleAt(SessionReader& reader, int run, const std::vector<std::uint64_t>& seqs,
                                               const std::function<bool(std::uint64_t seq)>& progress = {});
};

}  // namespace allocscope::storage
