#pragma once
// What one run of a program under one config produced: the numbers a comparison shows.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/compare/FragmentationMetrics.h"
#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/DeviceStats.h"

namespace allocscope::alloc {

struct RunOom {
    std::uint64_t opIndex = 0;
    std::string message;  // PyTorch's text (native or cudaMallocAsync wording)
};

// A point of the memory timeline, aligned across runs by op index.
struct TimelinePoint {
    std::uint64_t opIndex = 0;
    std::uint64_t allocated = 0;
    std::uint64_t reserved = 0;
};

struct RunMetrics {
    std::string label;       // the config as the user wrote it ("default" when empty)
    std::string configText;  // canonical (formatConfig); "" = PyTorch's defaults
    bool asyncBackend = false;
    std::uint64_t ops = 0;           // program ops applied
    std::uint64_t allocFreeOps = 0;  // allocs + frees among them (cost model)
    std::uint64_t events = 0;        // allocator events (native backend)
    std::uint64_t peakAllocated = 0;
    std::uint64_t peakReserved = 0;
    std::uint64_t peakReservedOp = 0;  // first op at which reserved reached its peak
    std::uint64_t finalAllocated = 0;
    std::uint64_t finalReserved = 0;
    // Native backend only (the async model has no segments to look into).
    std::optional<FragmentationMetrics> atPeak;
    std::optional<FragmentationMetrics> atEnd;
    std::uint64_t cudaMallocs = 0;  // segment_alloc events
    std::uint64_t cudaFrees = 0;    // segment_free events
    std::uint64_t maps = 0;         // segment_map events (expandable)
    std::uint64_t unmaps = 0;       // segment_unmap events
    std::uint64_t gcReleases = 0;   // segment frees caused by garbage collection
    std::uint64_t retries = 0;      // num_alloc_retries
    std::vector<RunOom> ooms;
    double allocatorUs = 0.0;       // CostModel estimate
    DeviceStats stats;              // final memory_stats()
    std::vector<TimelinePoint> timeline;
    std::optional<std::string> error;  // the program was invalid here; the run stopped

    bool oom() const { return !ooms.empty(); }
};

}  // namespace allocscope::alloc
