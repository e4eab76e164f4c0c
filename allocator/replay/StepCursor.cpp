#include "allocator/replay/StepCursor.h"

#include <stdexcept>
#include <string>

namespace allocscope::alloc {

StepCursor::StepCursor(const RecordedTrace& trace) : trace_(trace) {
    if (trace.entries.size() > StepIndex::kMaxEntries) {
        throw std::length_error("a trace of " + std::to_string(trace.entries.size()) + " entries is more than a replay takes (" +
                                std::to_string(StepIndex::kMaxEntries) + ")");
    }
}

bool StepCursor::next(TraceStep& step) {
    if (done_) return false;
    const SpillArray<RecordedEntry>& e = trace_.entries;
    const std::size_t begin = entry_;
    bool segmentEvents = false;  // seen since `begin`: a trailing step needs one
    for (std::size_t i = begin; i < e.size(); ++i) {
        const EventAction a = e[i].action;
        if (TraceSteps::isSegmentEvent(a)) {
            segmentEvents = true;
            continue;
        }
        if (a == EventAction::Snapshot) continue;
        step = TraceStep{begin, i, i + 1, false};
        if (a == EventAction::FreeRequested) {
            const bool adjacent = i + 1 < e.size() && e[i + 1].action == EventAction::FreeCompleted && e[i + 1].address == e[i].address;
            if (adjacent) {
                step.end = i + 2;
            } else {
                step.pendingFree = true;
            }
        }
        entry_ = step.end;
        ++count_;
        return true;
    }
    // Segment events after the last program event (an empty_cache() at the end of the program).
    done_ = true;
    entry_ = e.size();
    if (!segmentEvents) return false;
    step = TraceStep{begin, kNoEntry, e.size(), false};
    ++count_;
    return true;
}

}  // namespace allocscope::alloc
