#pragma once
// The reference placement for what-if replays: reuse the addresses the recorded run got from the
// real driver. A new segment of n bytes takes a recorded segment_alloc of n bytes from the same
// step if one is free, else the one of n bytes recorded nearest in steps that overlaps nothing
// live; a new expandable reservation takes the step's first recorded segment_map outside every
// live range, else the first recorded reservation base that is free. Anything else: no opinion.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {

class ReferencePlacement : public PlacementModel {
public:
    explicit ReferencePlacement(const RecordedTrace& recording);
    // From the recording's segment events (TraceSteps::segmentEvents), when they are at hand.
    explicit ReferencePlacement(const std::vector<StepSegmentEvent>& segmentEvents);
    std::optional<std::uint64_t> place(const PlacementRequest& request, const std::map<std::uint64_t, std::uint64_t>& live,
                                       std::size_t step) override;

    struct Recorded {
        std::uint64_t address = 0;
        std::uint64_t size = 0;
        std::size_t step = 0;
    };
    const std::vector<Recorded>& segmentAllocs() const { return allocs_; }
    const std::vector<Recorded>& segmentMaps() const { return maps_; }

private:
    std::vector<Recorded> allocs_;  // every recorded segment_alloc, in order
    std::vector<Recorded> maps_;    // every recorded segment_map, in order
};

}  // namespace allocscope::alloc
