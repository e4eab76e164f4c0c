#include "allocator/replay/PlacementModel.h"

namespace allocscope::alloc {

bool overlapsLive(const std::map<std::uint64_t, std::uint64_t>& live, std::uint64_t address, std::uint64_t size) {
    auto it = live.upper_bound(address);
    if (it != live.end() && it->first < address + size) return true;
    if (it != live.begin()) {
        --it;
        if (it->first + it->second > address) return true;
    }
    return false;
}

}  // namespace allocscope::alloc
