#pragma once
// Cuts a RecordedTrace into replay steps (reference §18.2): each step is the segment events
// recorded since the previous program event, plus that program event. A free_requested whose
// free_completed follows at once is one program event (one free() call); a free_completed that
// comes later is a program event of its own (the completion of a pending free). Segment events
// after the last program event form a final step without a program event.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

inline constexpr std::size_t kNoEntry = std::numeric_limits<std::size_t>::max();

struct TraceStep {
    std::size_t begin = 0;          // first entry of the step
    std::size_t program = kNoEntry; // the program event's entry; kNoEntry for a trailing step
    std::size_t end = 0;            // one past the last entry the step consumes
    // FreeRequested only: the free completes later (or never): the block had stream uses.
    bool pendingFree = false;
};

class TraceSteps {
public:
    static std::vector<TraceStep> cut(const RecordedTrace& trace);
    static bool isSegmentEvent(EventAction action);
    static bool isRelease(EventAction action);  // segment_free / segment_unmap
};

}  // namespace allocscope::alloc
