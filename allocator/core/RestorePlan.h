#pragma once
// How CachingAllocator::restoreSegments lays a snapshot's segments out again: one cudaMalloc'd
// segment per non-expandable SegmentInfo, and one expandable reservation per run of mapped ranges
// of the same stream and pool (a snapshot lists an expandable segment once per contiguous mapped
// range and never names the reservation). restoreSegments asks the device for the plan's
// segments and reservations in plan order; a replay's address oracle answers those requests from
// the same plan, so both agree on every address without sharing any other state.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/SegmentInfo.h"

namespace allocscope::alloc {

struct RestoredSpace {
    // A segment's address, or the reservation's base: its lowest mapped range. PyTorch maps a
    // reservation from its base upward, so that is where it starts unless empty_cache() unmapped
    // its lowest pages; the snapshot cannot tell.
    std::uint64_t address = 0;
    std::uint64_t size = 0;      // the segment's size, or the reservation's (9/8 of the device, whole pages)
    std::uint64_t pageSize = 0;  // expandable: 2 MiB (small pool) or large_segment_size (large pool)
    bool expandable = false;
    // Indexes into the restored segment list: the segment itself, or the reservation's mapped
    // ranges in address order.
    std::vector<std::size_t> ranges;
};

// In ascending address order. A range joins the reservation of the ranges below it when it has
// their stream, pool and pool id and lies within the reservation's size from its base.
std::vector<RestoredSpace> planRestore(const std::vector<SegmentInfo>& segments, const AllocatorConfig& config,
                                       std::uint64_t totalMemory);

}  // namespace allocscope::alloc
