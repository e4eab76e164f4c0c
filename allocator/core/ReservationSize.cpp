#include "allocator/core/ReservationSize.h"

namespace allocscope::alloc {

namespace {

// What numSegments() rounds up: totalGlobalMem + totalGlobalMem / 8 (integer division, as in PyTorch).
std::uint64_t ninthsOver(std::uint64_t total) { return total + total / 8; }

}  // namespace

std::uint64_t ReservationSize::of(std::uint64_t totalMemory, std::uint64_t pageSize) {
    if (pageSize == 0) return 0;
    return (ninthsOver(totalMemory) + pageSize - 1) / pageSize * pageSize;
}

std::uint64_t ReservationSize::largestTotalWithin(std::uint64_t bytes, std::uint64_t pageSize) {
    if (pageSize == 0) return 0;
    // of(T) <= bytes exactly when T + T/8 <= the whole pages in `bytes`; T + T/8 grows with T.
    const std::uint64_t whole = bytes / pageSize * pageSize;
    std::uint64_t total = whole / 9 * 8 + (whole % 9) * 8 / 9;  // about 8/9 of it, without overflow
    while (ninthsOver(total + 1) <= whole) ++total;
    while (total > 0 && ninthsOver(total) > whole) --total;
    return total;
}

}  // namespace allocscope::alloc
