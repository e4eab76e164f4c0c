#include "allocator/replay/TraceSteps.h"

#include "allocator/replay/StepCursor.h"

namespace allocscope::alloc {

bool TraceSteps::isSegmentEvent(EventAction action) {
    return action == EventAction::SegmentAlloc || action == EventAction::SegmentFree ||
           action == EventAction::SegmentMap || action == EventAction::SegmentUnmap;
}

bool TraceSteps::isRelease(EventAction action) {
    return action == EventAction::SegmentFree || action == EventAction::SegmentUnmap;
}

std::vector<StepSegmentEvent> TraceSteps::segmentEvents(const RecordedTrace& trace) {
    StepCursor cursor(trace);
    SpillArray<RecordedEntry>::Walk entryWalk(trace.entries);
    std::vector<StepSegmentEvent> events;
    TraceStep step;
    while (cursor.next(step)) {
        entryWalk.at(step.begin);
        for (std::size_t i = step.begin; i < step.end; ++i) {
            const RecordedEntry& e = trace.entries[i];
            if (isSegmentEvent(e.action)) events.push_back(StepSegmentEvent{cursor.count() - 1, e.action, e.address, e.size});
        }
    }
    trace.entries.forget(0, trace.entries.size());
    return events;
}

}  // namespace allocscope::alloc
