#pragma once
// The four timeline series (allocated / reserved / active / requested bytes, all pools) move
// by amounts every event carries, so a chunk's values follow from its start values and its
// events without the segment model (reference §8.2).
#include <array>
#include <cstdint>

#include "allocator/core/Event.h"

namespace allocscope::storage {

struct SeriesValues {
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
    std::int64_t active = 0;
    std::int64_t requested = 0;

    void apply(const alloc::Event& e) {
        const auto rounded = static_cast<std::int64_t>(e.roundedSize);
        const auto size = static_cast<std::int64_t>(e.size);
        switch (e.action) {
            case alloc::EventAction::Alloc:
                allocated += rounded;
                active += rounded;
                requested += size;
                break;
            case alloc::EventAction::FreeRequested: allocated -= rounded; break;
            case alloc::EventAction::FreeCompleted:
                active -= rounded;
                requested -= size;
                break;
            case alloc::EventAction::SegmentAlloc:
            case alloc::EventAction::SegmentMap: reserved += size; break;
            case alloc::EventAction::SegmentFree:
            case alloc::EventAction::SegmentUnmap: reserved -= size; break;
            case alloc::EventAction::Oom:
            case alloc::EventAction::Snapshot: break;
        }
    }
    std::array<std::int64_t, 4> array() const { return {allocated, reserved, active, requested}; }
};

// Events per timeline sample (min and max of each series), stored beside each chunk.
inline constexpr std::uint64_t kSampleEvents = 64;

}  // namespace allocscope::storage
