#pragma once
// The allocator's statistics, as PyTorch's DeviceStats: what torch.cuda.memory_stats() flattens
// into its 122 keys ("allocated_bytes.all.current", ...).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace allocscope::alloc {

struct Stat {
    std::int64_t current = 0;
    std::int64_t peak = 0;
    std::int64_t allocated = 0;
    std::int64_t freed = 0;

    void increase(std::int64_t amount) {
        current += amount;
        if (current > peak) peak = current;
        allocated += amount;
    }
    void decrease(std::int64_t amount) {
        current -= amount;
        freed += amount;
    }
    void resetPeak() { peak = current; }
    void resetAccumulated() { allocated = freed = 0; }
    bool operator==(const Stat&) const = default;
};

// Indexed by StatType: every update goes to Aggregate plus the pool's own type.
enum StatType : std::size_t { kAggregate = 0, kSmallPool = 1, kLargePool = 2 };
using StatArray = std::array<Stat, 3>;

struct DeviceStats {
    StatArray allocation{};
    StatArray segment{};
    StatArray active{};
    StatArray inactive_split{};
    StatArray allocated_bytes{};
    StatArray reserved_bytes{};
    StatArray active_bytes{};
    StatArray inactive_split_bytes{};
    StatArray requested_bytes{};
    Stat oversize_allocations{};
    Stat oversize_segments{};
    std::int64_t num_alloc_retries = 0;
    std::int64_t num_ooms = 0;
    std::int64_t num_sync_all_streams = 0;
    std::int64_t num_device_alloc = 0;
    std::int64_t num_device_free = 0;
    std::int64_t max_split_size = -1;  // SIZE_MAX (unlimited) shows as -1, as in PyTorch

    void resetPeak();         // reset_peak_memory_stats()
    void resetAccumulated();  // reset_accumulated_memory_stats()
    bool operator==(const DeviceStats&) const = default;

    // The 122 keys of memory_stats(), sorted by key as PyTorch returns them.
    std::vector<std::pair<std::string, std::int64_t>> flatten() const;
    // Reverse of flatten(): sets one key; false if the key is not one of the 122.
    bool set(std::string_view key, std::int64_t value);
};

// The nine StatArray members in declaration order, for code that treats every Stat alike (a
// keyframe's codec, a recorder's watch on the statistics): one list, so that none misses one.
inline constexpr std::array<StatArray DeviceStats::*, 9> kStatArrays = {
    &DeviceStats::allocation,     &DeviceStats::segment,         &DeviceStats::active,
    &DeviceStats::inactive_split, &DeviceStats::allocated_bytes, &DeviceStats::reserved_bytes,
    &DeviceStats::active_bytes,   &DeviceStats::inactive_split_bytes, &DeviceStats::requested_bytes};

}  // namespace allocscope::alloc
