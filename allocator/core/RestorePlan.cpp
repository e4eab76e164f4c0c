#include "allocator/core/RestorePlan.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/ReservationSize.h"

namespace allocscope::alloc {

std::vector<RestoredSpace> planRestore(const std::vector<SegmentInfo>& segments, const AllocatorConfig& config,
                                       std::uint64_t totalMemory) {
    std::vector<std::size_t> order(segments.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return segments[a].address < segments[b].address; });

    std::vector<RestoredSpace> plan;
    // The reservation each (stream, pool, pool id) is filling: later ranges of that key join it
    // while they fit (ranges come in address order, so a reservation's ranges are consecutive
    // for its key even when another key's ranges lie between them).
    using Key = std::tuple<StreamId, PoolKind, std::uint64_t, std::uint64_t>;
    std::vector<std::pair<Key, std::size_t>> open;
    for (const std::size_t index : order) {
        const SegmentInfo& info = segments[index];
        if (!info.isExpandable) {
            plan.push_back(RestoredSpace{info.address, info.totalSize, 0, false, {index}});
            continue;
        }
        const Key key{info.stream, info.pool, info.poolId.first, info.poolId.second};
        auto it = std::find_if(open.begin(), open.end(), [&](const auto& entry) { return entry.first == key; });
        if (it != open.end()) {
            RestoredSpace& space = plan[it->second];
            if (info.address + info.totalSize <= space.address + space.size) {
                space.ranges.push_back(index);
                continue;
            }
        }
        // find_expandable_block's reservation: 9/8 of the device's memory in whole pages.
        const std::uint64_t pageSize = info.pool == PoolKind::Small ? kSmallBuffer : config.largeSegmentSize;
        plan.push_back(RestoredSpace{info.address, ReservationSize::of(totalMemory, pageSize), pageSize, true, {index}});
        if (it != open.end()) {
            it->second = plan.size() - 1;
        } else {
            open.emplace_back(key, plan.size() - 1);
        }
    }
    return plan;
}

}  // namespace allocscope::alloc
