#pragma once
// Where a new segment (cudaMalloc) or expandable reservation (cuMemAddressReserve) lands when a
// replay has no recorded address for it (what-if replays under another config). Addresses are
// part of the allocator's decisions (best fit breaks equal-size ties by address), so a what-if is
// only exact when placement imitates the real driver.
#include <cstdint>
#include <map>
#include <optional>

#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc {

class PlacementModel {
public:
    virtual ~PlacementModel() = default;
    // `live`: the device's live segments and reservations (base -> size). `step`: the replayed
    // trace step asking (the recorded program event index it belongs to). nullopt = no opinion
    // (the SimulatedDevice's own placement decides).
    virtual std::optional<std::uint64_t> place(const PlacementRequest& request,
                                               const std::map<std::uint64_t, std::uint64_t>& live,
                                               std::size_t step) = 0;
};

// No opinion ever: the SimulatedDevice's own placement decides everything.
class NoPlacement final : public PlacementModel {
public:
    std::optional<std::uint64_t> place(const PlacementRequest&, const std::map<std::uint64_t, std::uint64_t>&,
                                       std::size_t) override {
        return std::nullopt;
    }
};

// True if [address, address + size) overlaps a live range.
bool overlapsLive(const std::map<std::uint64_t, std::uint64_t>& live, std::uint64_t address, std::uint64_t size);

}  // namespace allocscope::alloc
