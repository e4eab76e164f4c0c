#pragma once
// Everything PYTORCH_CUDA_ALLOC_CONF can set, as a plain value. Defaults are PyTorch 2.11's.
// parseConfig() (ConfigParser.h) builds one from a string; formatConfig() writes it back.
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>

namespace allocscope::alloc {

inline constexpr std::uint64_t kMiB = 1024ull * 1024ull;
inline constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

enum class Backend : std::uint8_t { Native, CudaMallocAsync };

struct AllocatorConfig {
    Backend backend = Backend::Native;
    // Blocks >= this are "oversize": never split, reused only by requests within
    // maxNonSplitRounding of their size. kUnlimited = option not set.
    std::uint64_t maxSplitSize = kUnlimited;
    std::uint64_t maxNonSplitRounding = 20 * kMiB;  // defaults to largeSegmentSize
    std::uint64_t largeSegmentSize = 20 * kMiB;     // kLargeBuffer: segment for 1-10 MiB requests
    // roundup_power2_divisions, one entry per power-of-two interval (entry 0: < 2 MiB,
    // entry k: [2^k, 2^(k+1)) MiB, entry 15: >= 32 GiB). 0 = no power-of-two rounding.
    std::array<std::uint64_t, 16> roundupPower2Divisions{};
    double garbageCollectionThreshold = 0.0;  // 0 = off; needs a memory fraction to matter
    bool expandableSegments = false;
    bool releaseLockOnCudaMalloc = false;
    bool graphCaptureRecordStreamReuse = false;
    std::optional<double> perProcessMemoryFraction;  // unset = 1.0 (no cap)
    // Host (pinned) allocator options: accepted and kept, no effect on the device allocator.
    bool pinnedUseCudaHostRegister = false;
    std::uint64_t pinnedNumRegisterThreads = 1;
    bool pinnedUseBackgroundThreads = false;
    std::uint64_t pinnedReserveSegmentSizeMb = 0;

    bool operator==(const AllocatorConfig&) const = default;

    // The interval index of roundupPower2Divisions that applies to `size` bytes.
    static std::size_t roundupIntervalIndex(std::uint64_t size) {
        // floor(log2(size)) (0 for 0 and 1), as c10's llvm::Log2_64, in one instruction: a shift
        // loop here cost up to 28 iterations on every malloc (round_size asks for every request).
        const std::size_t log2 = size > 1 ? static_cast<std::size_t>(std::bit_width(size)) - 1 : 0;
        if (log2 <= 20) return 0;
        return log2 - 20 > 15 ? 15 : log2 - 20;
    }
    std::uint64_t roundupDivisionsFor(std::uint64_t size) const {
        return roundupPower2Divisions[roundupIntervalIndex(size)];
    }
};

}  // namespace allocscope::alloc
