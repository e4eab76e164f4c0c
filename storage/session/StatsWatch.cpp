#include "storage/session/StatsWatch.h"

#include <cstddef>
#include <cstring>

namespace allocscope::storage {

static_assert(offsetof(alloc::Stat, allocated) == offsetof(alloc::Stat, peak) + sizeof(std::int64_t),
              "StatsWatch reads a Stat's peak and allocated total as one pair");

bool StatsWatch::moved(const alloc::DeviceStats& now) {
    // The differences are OR-ed together and their sign read once at the end: no value is
    // negative, so no difference overflows, and a value that went down leaves the sign bit set.
    Pair down{0, 0};
    std::size_t k = 0;
    const auto watch = [&](const alloc::Stat& stat) {
        Pair pair;
        std::memcpy(&pair, &stat.peak, sizeof(pair));
        down |= pair - peakAndAllocated_[k];
        peakAndAllocated_[k++] = pair;
    };
    for (const auto array : alloc::kStatArrays) {
        for (const alloc::Stat& stat : now.*array) watch(stat);
    }
    watch(now.oversize_allocations);
    watch(now.oversize_segments);
    const std::int64_t counted = (now.num_ooms - ooms_) | (now.num_device_alloc - deviceAllocs_) |
                                 (now.num_device_free - deviceFrees_);
    const bool changed = (down[0] | down[1] | counted) < 0 || now.num_alloc_retries != retries_ ||
                         now.num_sync_all_streams != syncs_;
    ooms_ = now.num_ooms;
    deviceAllocs_ = now.num_device_alloc;
    deviceFrees_ = now.num_device_free;
    retries_ = now.num_alloc_retries;
    syncs_ = now.num_sync_all_streams;
    return changed;
}

}  // namespace allocscope::storage
