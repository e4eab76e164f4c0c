#pragma once
// What SessionRecorder::syncStats watches in the allocator's statistics between two replay steps:
// the values that events alone never lower or change. Peaks and accumulated totals only grow with
// events, unless reset_peak_memory_stats() or reset_accumulated_memory_stats() lowered them;
// num_ooms and the device call counts only grow with their events; num_alloc_retries and
// num_sync_all_streams have no event at all. When any of them moved otherwise, the recorder
// stores the statistics whole (a stats fixup) so that a reader rebuilds them exactly.
//
// Why its own copy of only those values: a big import asks after every step (millions of times),
// and comparing and copying the whole DeviceStats was a sixth of the replay thread's work. Each
// Stat's peak and allocated total lie side by side, so one 16-byte subtraction checks both.
#include <array>
#include <cstdint>
#include <tuple>

#include "allocator/core/DeviceStats.h"

namespace allocscope::storage {

class StatsWatch {
public:
    explicit StatsWatch(const alloc::DeviceStats& initial) { moved(initial); }
    // Whether `now` has a watched value that events could not have made from the last ones seen
    // (a reset, a retry, a stream sync); `now` becomes the last seen either way.
    bool moved(const alloc::DeviceStats& now);

private:
    // Every Stat of the StatArrays and the two oversize Stats.
    static constexpr std::size_t kStats = alloc::kStatArrays.size() * std::tuple_size_v<alloc::StatArray> + 2;
    __extension__ using Pair = std::int64_t __attribute__((vector_size(16)));
    std::array<Pair, kStats> peakAndAllocated_{};
    std::int64_t ooms_ = 0;
    std::int64_t deviceAllocs_ = 0;
    std::int64_t deviceFrees_ = 0;
    std::int64_t retries_ = 0;
    std::int64_t syncs_ = 0;
};

}  // namespace allocscope::storage
