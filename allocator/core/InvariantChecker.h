#pragma once
// Checks a CachingAllocator's structure and statistics after any operation (tests, soak runs).
//
// Structure: every segment's blocks tile it exactly (addresses contiguous, linked both ways,
// sizes summing to the segment), no two adjacent free blocks left unmerged (same mapped state,
// neither pending), every free mapped block in its pool's free set and nothing else there,
// every unmapped range in the unmapped set, every allocated / pending block in the address map.
//
// Statistics: recomputed, never read back from the allocator. `current` values of the byte and
// count stats come from the block lists; peaks, totals ("allocated"/"freed") and the counters
// come from shadow statistics that the checker keeps itself by observing the event stream (it
// is an EventSink: put it in the allocator's sink chain). inactive_split's totals depend on
// merge order the events do not show, so for them the checker verifies current, peak >= current
// and allocated - freed = current (up to accumulated-stat resets).
//
// Resets do not emit events: call noteResetPeak() / noteResetAccumulated() alongside them.
#include <cstdint>
#include <string>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/core/EventSink.h"

namespace allocscope::alloc {

class InvariantChecker final : public EventSink {
public:
    explicit InvariantChecker(std::uint64_t maxSplitSize = kUnlimited);

    void onEvent(const Event& event) override;
    void noteResetPeak();
    void noteResetAccumulated(const CachingAllocator& allocator);

    // Empty string when everything holds; otherwise the first violation, described.
    std::string check(const CachingAllocator& allocator) const;

    const DeviceStats& shadow() const { return shadow_; }

private:
    std::string checkStats(const CachingAllocator& allocator, const DeviceStats& recomputed) const;

    std::uint64_t maxSplitSize_;
    DeviceStats shadow_;
    // inactive_split: allocated - freed as of the last accumulated reset.
    StatArray inactiveSplitBase_{};
    StatArray inactiveSplitBytesBase_{};
    std::uint64_t lastSeq_ = 0;
    bool sawEvent_ = false;
    mutable std::string sequenceError_;
};

}  // namespace allocscope::alloc
