#pragma once
// The virtual reservation of an expandable segment (reference §6.1). PyTorch 2.11's
// ExpandableSegment constructor reserves segment_size_ * max_handles_ bytes with
// max_handles_ = numSegments(totalGlobalMem + totalGlobalMem / 8): 9/8 of the device's memory in
// whole pages of 2 MiB (small pool) or large_segment_size (large pool). The size is the device's,
// so a recording's reservations also say something about the device it ran on: reservations never
// overlap, so one that ends at or below the next recorded reservation bounds the total memory.
#include <cstdint>

namespace allocscope::alloc {

class ReservationSize {
public:
    // The bytes cuMemAddressReserve is asked for on a device of `totalMemory` bytes.
    static std::uint64_t of(std::uint64_t totalMemory, std::uint64_t pageSize);
    // The largest device total memory whose reservation of `pageSize` pages fits in `bytes`
    // (0 when not even a device of one byte's does).
    static std::uint64_t largestTotalWithin(std::uint64_t bytes, std::uint64_t pageSize);
};

}  // namespace allocscope::alloc
