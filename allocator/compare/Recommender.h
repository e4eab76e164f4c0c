#pragma once
// `recommend`: runs a program over a grid of allocator configs and picks the simplest config
// whose peak reserved memory is within `tolerance` (1 %) of the lowest peak reserved among the
// runs that do not OOM; then, for every config, finds the smallest GPU on which the program
// runs without an OOM (binary search on total memory, the CUDA context kept as it is).
//
// The grid: expandable_segments {off, on} x max_split_size_mb {unset, 128, 512} x
// roundup_power2_divisions {unset, 4}, plus garbage_collection_threshold {unset, 0.6} when a
// memory fraction is in play (without one the threshold is inert, reference §4.1), plus
// backend:cudaMallocAsync alone, plus any extra configs the caller adds. "Simplest" = fewest
// options set; ties go to the lower peak reserved, then the lower estimated allocator time.
// backend:cudaMallocAsync is run and shown but, by default, not eligible: its reserved bytes
// come from a fitted model (AsyncBackendModel.h) that underestimates some programs by up to 39 %.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"

namespace allocscope::alloc {

struct RecommendCandidate {
    CompareConfig config;
    int complexity = 0;                          // options set
    RunMetrics metrics;
    std::optional<std::uint64_t> minTotalMemory;  // smallest fitting total memory; nullopt: not even the device's
};

struct Recommendation {
    std::vector<RecommendCandidate> candidates;  // grid order
    std::optional<std::size_t> chosen;           // nullopt: every config OOMs
    std::uint64_t lowestPeakReserved = 0;        // among eligible configs that do not OOM
    double margin = 0.0;                         // chosen's peak reserved / lowest - 1
};

struct RecommendOptions {
    double tolerance = 0.01;
    bool searchGpuSize = true;
    std::uint64_t gpuGranularity = 256ull << 20;  // binary-search resolution of total memory
    unsigned threads = 0;
    CostModel cost;
    std::vector<CompareConfig> extraConfigs;  // appended to the grid (e.g. the user's own)
    bool asyncEligible = false;               // may the async backend's model be recommended?
    // The grid's runs (not the GPU-size search's): as CompareOptions::observerFor, called once
    // per candidate in candidate order before the grid runs.
    RunObserverFor observerFor;
};

class Recommender {
public:
    static std::vector<CompareConfig> grid(bool withFraction);
    static Recommendation recommend(const Program& program, const CompareDevice& device,
                                    const RecommendOptions& options = {});
    // Smallest total memory (a multiple of `granularity`, at most device.totalMemory) on which
    // the program runs without an OOM under `config`; nullopt if it OOMs on the device itself.
    static std::optional<std::uint64_t> smallestGpu(const Program& program, const CompareConfig& config,
                                                    const CompareDevice& device, std::uint64_t granularity);
};

}  // namespace allocscope::alloc
