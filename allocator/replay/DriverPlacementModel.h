#pragma once
// A placement model of the real CUDA driver, fitted to the segment addresses in the recorded
// traces (reference §18.3), for what-if replays: where cudaMalloc and cuMemAddressReserve put a
// new range that the recorded run never asked for.
//
// What the traces show, and what the model does with it:
// - The recorded run's own answers are the driver's answers for the same state: a request of n
//   bytes takes a recorded segment of n bytes from the same step, else the nearest one in steps,
//   when it is free (the reference model).
// - Otherwise the driver carves a new range below the lowest range it handed out so far, and
//   large ranges start on a 32 MiB boundary going down; smaller ones first fill a free gap
//   between live ranges (lowest fitting gap above the new-range frontier).
// - 2 MiB small-pool segments live in their own region (next to the first small segment).
// - A destroyed expandable reservation's base is handed out again to the next reservation.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/ReferencePlacement.h"

namespace allocscope::alloc {

class DriverPlacementModel : public PlacementModel {
public:
    explicit DriverPlacementModel(const RecordedTrace& recording);
    std::optional<std::uint64_t> place(const PlacementRequest& request, const std::map<std::uint64_t, std::uint64_t>& live,
                                       std::size_t step) override;

private:
    std::optional<std::uint64_t> fresh(const PlacementRequest& request, const std::map<std::uint64_t, std::uint64_t>& live);

    ReferencePlacement reference_;
    std::uint64_t top_ = 0;        // highest end of any recorded range: the driver's heap top
    std::uint64_t frontier_ = 0;   // lowest base handed out so far (recorded or modelled)
    std::vector<std::uint64_t> releasedReservations_;  // bases of reservations that went away
    std::map<std::uint64_t, std::uint64_t> reservations_;  // reservations placed by this model
};

}  // namespace allocscope::alloc
