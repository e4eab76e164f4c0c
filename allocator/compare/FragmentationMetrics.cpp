#include "allocator/compare/FragmentationMetrics.h"

#include <algorithm>

namespace allocscope::alloc {

FragmentationMetrics FragmentationMetrics::of(const std::vector<SegmentInfo>& segments, std::uint64_t smallPage,
                                              std::uint64_t largePage) {
    FragmentationMetrics m;
    for (const SegmentInfo& seg : segments) {
        m.reserved += seg.totalSize;
        bool anyActive = false;
        std::uint64_t segFree = 0;
        std::uint64_t segReleasable = 0;
        for (const BlockInfo& block : seg.blocks) {
            if (block.state == BlockState::Inactive) {
                segFree += block.size;
                m.largestFree = std::max(m.largestFree, block.size);
                if (seg.isExpandable) {
                    // Whole pages strictly inside the free block are what an unmap can return.
                    const std::uint64_t page = seg.pool == PoolKind::Small ? smallPage : largePage;
                    const std::uint64_t first = (block.address + page - 1) / page * page;
                    const std::uint64_t last = (block.address + block.size) / page * page;
                    if (last > first) segReleasable += last - first;
                }
            } else {
                anyActive = true;
                if (block.state == BlockState::ActiveAllocated) {
                    m.allocated += block.size;
                    m.roundingLoss += block.size - std::min(block.size, block.requestedSize);
                }
            }
        }
        m.totalFree += segFree;
        if (!seg.poolId.isDefault()) {
            // A private pool's cache goes back only once its graph or MemPool is gone (the pool
            // is freeable), which a snapshot does not say: while the pool is in use, as it mostly
            // is, empty_cache() leaves all of it.
            m.strandedFree += segFree;
        } else if (seg.isExpandable) {
            // Free pages go back on empty_cache(); only the partial pages around blocks stay.
            m.releasable += segReleasable;
            m.strandedFree += segFree - segReleasable;
        } else if (anyActive) {
            m.strandedFree += segFree;
        } else {
            m.releasable += seg.totalSize;
        }
    }
    m.fragmentation = m.totalFree == 0 ? 0.0
                                       : 1.0 - static_cast<double>(m.largestFree) / static_cast<double>(m.totalFree);
    return m;
}

}  // namespace allocscope::alloc
