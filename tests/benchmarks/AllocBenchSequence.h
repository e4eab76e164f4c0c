#pragma once
// The fixed allocator benchmark sequence: a deterministic list of allocations and frees with the
// size mix of the GPU anchor benchmark (shared/traces/pytorch-2.11-h100/c10_allocbench.cpp):
// 50% 512 B - 1 MiB log-uniform, 42% 1 - 20 MiB uniform, 8% 20 - 256 MiB uniform; at most 400
// live tensors and 6 GiB live; otherwise alloc or free with equal odds. Our own generator
// (splitmix64), shared by bench_allocator_ops and the GPU backend benchmarks so that every
// backend runs exactly the same operations.
#include <cmath>
#include <cstdint>
#include <vector>

namespace allocscope::bench {

struct BenchOp {
    bool alloc = true;
    std::uint64_t size = 0;   // alloc: requested bytes
    std::uint32_t victim = 0;  // free: index into the live list (swap-with-last removal)
};

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t state_;
};

inline constexpr std::uint64_t kBenchSeed = 0xA110C5C09Eull;
inline constexpr std::size_t kBenchMaxLive = 400;
inline constexpr std::uint64_t kBenchMaxLiveBytes = 6ull << 30;

// One request of the anchor size mix (three draws from `rng` at most, in this order).
inline std::uint64_t anchorSize(SplitMix64& rng) {
    constexpr double kMiB = 1048576.0;
    const double pick = rng.unit();
    double bytes = 0;
    if (pick < 0.50) {
        bytes = std::exp(std::log(512.0) + rng.unit() * (std::log(kMiB) - std::log(512.0)));
    } else if (pick < 0.92) {
        bytes = kMiB + rng.unit() * 19.0 * kMiB;
    } else {
        bytes = 20.0 * kMiB + rng.unit() * 236.0 * kMiB;
    }
    return static_cast<std::uint64_t>(bytes);
}

inline std::vector<BenchOp> makeBenchSequence(std::size_t count, std::uint64_t seed = kBenchSeed) {
    SplitMix64 rng(seed);
    std::vector<BenchOp> ops;
    ops.reserve(count);
    std::vector<std::uint64_t> liveSizes;
    std::uint64_t liveBytes = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const bool canAlloc = liveSizes.size() < kBenchMaxLive && liveBytes < kBenchMaxLiveBytes;
        const bool alloc = liveSizes.empty() || (canAlloc && rng.unit() < 0.5);
        if (alloc) {
            const std::uint64_t size = anchorSize(rng);
            ops.push_back({true, size, 0});
            liveSizes.push_back(size);
            liveBytes += size;
        } else {
            const auto victim = static_cast<std::uint32_t>(rng.next() % liveSizes.size());
            ops.push_back({false, 0, victim});
            liveBytes -= liveSizes[victim];
            liveSizes[victim] = liveSizes.back();
            liveSizes.pop_back();
        }
    }
    return ops;
}

}  // namespace allocscope::bench
