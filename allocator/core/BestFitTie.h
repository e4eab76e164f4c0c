#pragma once
// A best-fit decision that an address settled: the free block the allocator took and another
// candidate of the same size (and, for expandable segments, the same growable size) on the same
// stream, in another segment (one report per such candidate). PyTorch 2.11 orders its free sets by (stream, size, address), so
// the block at the lower address wins; when the two segments' bases came from a model of the
// CUDA driver rather than from a recording, so did the decision (TraceReplayer counts those).
#include <cstdint>
#include <functional>

#include "allocator/core/Event.h"

namespace allocscope::alloc {

struct BestFitTie {
    std::uint64_t opIndex = 0;      // the op stamped on the allocator's events (setOpIndex)
    std::uint64_t requestSize = 0;  // the rounded request
    std::uint64_t blockSize = 0;    // the size both candidates have
    StreamId stream = 0;
    std::uint64_t chosen = 0;         // the block taken (the lower address)
    std::uint64_t chosenSegment = 0;  // its segment's (or reservation's) base
    std::uint64_t other = 0;          // an equal candidate passed over
    std::uint64_t otherSegment = 0;
};

// Called inside malloc, before the chosen block is split; must not call back into the allocator.
using BestFitTieObserver = std::function<void(const BestFitTie&)>;

}  // namespace allocscope::alloc
