#pragma once
// Estimated time spent in the allocator, from counts a run produces. Calibrated on a real GPU
// (H100 80GB, torch 2.11.0+cu130; traces/pytorch-2.11-h100/README.md, a fixed mixed sequence of
// 10^6 alloc/free operations, sizes 512 B-256 MiB, best of five warm passes):
//   c10 caching allocator       447 ns per alloc or free (686 ns with expandable_segments:True)
//   cudaMallocAsync/FreeAsync 1,408 ns per alloc or free
//   cudaMalloc/cudaFree      38,844 ns per call
// Segment maps and unmaps of expandable segments (cuMemCreate + cuMemMap + cuMemSetAccess, and
// the reverse with a stream synchronisation) were not measured separately: they are charged as
// one cudaMalloc/cudaFree call each — an assumption, stated wherever the estimate is shown.
// Device synchronisations (OOM retry, empty_cache) are not charged: their cost is the GPU work
// they wait for, which a simulation does not know.
#include <cstdint>

namespace allocscope::alloc {

struct CostModel {
    double cachedOpUs = 0.447;            // one alloc or free served by the native allocator
    double cachedOpExpandableUs = 0.686;  // the same with expandable_segments:True
    double asyncOpUs = 1.408;             // one alloc or free under backend:cudaMallocAsync
    double driverCallUs = 38.844;         // one cudaMalloc or cudaFree
    double mapCallUs = 38.844;            // one segment map or unmap (assumed = driverCallUs)

    // Native backend: `ops` program allocs + frees, then the driver calls.
    double nativeUs(std::uint64_t ops, bool expandable, std::uint64_t mallocs, std::uint64_t frees,
                    std::uint64_t maps, std::uint64_t unmaps) const {
        return static_cast<double>(ops) * (expandable ? cachedOpExpandableUs : cachedOpUs) +
               static_cast<double>(mallocs + frees) * driverCallUs + static_cast<double>(maps + unmaps) * mapCallUs;
    }
    // cudaMallocAsync: the pool's own growth is inside the measured per-op cost.
    double asyncUs(std::uint64_t ops) const { return static_cast<double>(ops) * asyncOpUs; }
};

}  // namespace allocscope::alloc
