#include "allocator/replay/RelativeAddresses.h"

namespace allocscope::alloc {

std::optional<RelativePosition> RelativeAddresses::locate(std::uint64_t address) const {
    auto it = live_.upper_bound(address);
    if (it == live_.begin()) return std::nullopt;
    --it;
    if (address >= it->first + it->second.size) return std::nullopt;
    return RelativePosition{it->second.ordinal, address - it->first};
}

void RelativeAddresses::note(EventAction action, std::uint64_t address, std::uint64_t size) {
    switch (action) {
        case EventAction::SegmentAlloc:
            live_[address] = Range{size, next_++};
            break;
        case EventAction::SegmentFree:
            live_.erase(address);
            break;
        case EventAction::SegmentMap:
            // The first map of a new reservation is at its base. (A destroyed reservation leaves
            // no event; one whose base comes back is simply the same reservation again here.)
            if (!locate(address)) live_[address] = Range{reservationSize_, next_++};
            break;
        default:
            break;
    }
}

std::string RelativeAddresses::describe(const std::optional<RelativePosition>& position) {
    if (!position) return "outside every segment";
    return "segment #" + std::to_string(position->ordinal) + " + " + std::to_string(position->offset);
}

}  // namespace allocscope::alloc
