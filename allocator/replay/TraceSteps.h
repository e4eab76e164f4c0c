#pragma once
// How a RecordedTrace is cut into replay steps (reference §18.2; a StepCursor cuts them): each
// step is the segment events recorded since the previous program event, plus that program event.
// A free_requested whose free_completed follows at once is one program event (one free() call); a
// free_completed that comes later is a program event of its own (the completion of a pending
// free). Segment events after the last program event form a final step without a program event.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

inline constexpr std::size_t kNoEntry = std::numeric_limits<std::size_t>::max();

// A trace entry index as a step stores it: 32 bits, read as a std::size_t (kNoEntry stays
// kNoEntry): a step is 16 bytes instead of 32.
// Both conversions are implicit on purpose: the replay reads and compares steps' indices as the
// size_t entry indices they are.
class StepIndex {
public:
    StepIndex(std::size_t index = 0) : value_(index == kNoEntry ? kNone : static_cast<std::uint32_t>(index)) {}
    operator std::size_t() const { return value_ == kNone ? kNoEntry : value_; }
    // The largest trace a StepCursor accepts (a 4-billion-entry snapshot would be ~350 GB).
    static constexpr std::size_t kMaxEntries = 0xFFFF'FFFEu;

private:
    static constexpr std::uint32_t kNone = 0xFFFF'FFFFu;
    std::uint32_t value_;
};

struct TraceStep {
    StepIndex begin = 0;           // first entry of the step
    StepIndex program = kNoEntry;  // the program event's entry; kNoEntry for a trailing step
    StepIndex end = 0;             // one past the last entry the step consumes
    // FreeRequested only: the free completes later (or never): the block had stream uses.
    bool pendingFree = false;
};
static_assert(sizeof(TraceStep) == 16);

// A segment event of a recording with the replay step it falls in (TraceSteps::segmentEvents).
struct StepSegmentEvent {
    std::size_t step = 0;
    EventAction action = EventAction::SegmentAlloc;  // segment_alloc / _free / _map / _unmap
    std::uint64_t address = 0;
    std::uint64_t size = 0;
};

class TraceSteps {
public:
    // Every segment event of the trace, in trace order, with its step: one pass over the entries
    // (walked: a big trace's pages leave memory) for the placement models, which need only
    // these few events. Throws std::length_error as StepCursor does.
    static std::vector<StepSegmentEvent> segmentEvents(const RecordedTrace& trace);
    static bool isSegmentEvent(EventAction action);
    static bool isRelease(EventAction action);  // segment_free / segment_unmap
};

}  // namespace allocscope::alloc
