#pragma once
// Where reserved memory goes, from one snapshot of the segments (PyTorch's snapshot layout):
//   roundingLoss  bytes handed out beyond what was asked (block size - requested size of every
//                 allocated block: 512 B rounding, unsplit remainders, power-of-two rounding)
//   strandedFree  free bytes inside segments that still hold an active block, and all free bytes
//                 of private pools (CUDA graphs, MemPools): cached, but empty_cache() cannot
//                 return them to the driver (PyTorch's "non-releasable" inactive splits)
//   fragmentation 1 - largest free block / total free (0 = all free memory in one block)
//   releasable    what empty_cache() would return now: the default pools' whole free segments,
//                 and the whole free pages of their expandable segments
#include <cstdint>
#include <vector>

#include "allocator/core/SegmentInfo.h"

namespace allocscope::alloc {

struct FragmentationMetrics {
    std::uint64_t reserved = 0;
    std::uint64_t allocated = 0;
    std::uint64_t roundingLoss = 0;
    std::uint64_t strandedFree = 0;
    std::uint64_t totalFree = 0;
    std::uint64_t largestFree = 0;
    double fragmentation = 0.0;
    std::uint64_t releasable = 0;

    // `smallPage` / `largePage`: the page sizes of expandable segments (2 MiB, large_segment_size).
    static FragmentationMetrics of(const std::vector<SegmentInfo>& segments, std::uint64_t smallPage,
                                   std::uint64_t largePage);
};

}  // namespace allocscope::alloc
