#include "allocator/replay/TraceSteps.h"

#include <stdexcept>
#include <string>

namespace allocscope::alloc {

bool TraceSteps::isSegmentEvent(EventAction action) {
    return action == EventAction::SegmentAlloc || action == EventAction::SegmentFree ||
           action == EventAction::SegmentMap || action == EventAction::SegmentUnmap;
}

bool TraceSteps::isRelease(EventAction action) {
    return action == EventAction::SegmentFree || action == EventAction::SegmentUnmap;
}

SpillArray<TraceStep> TraceSteps::cut(const RecordedTrace& trace) {
    SpillArray<TraceStep> steps;
    const SpillArray<RecordedEntry>& e = trace.entries;
    if (e.size() > StepIndex::kMaxEntries) {
        throw std::length_error("a trace of " + std::to_string(e.size()) + " entries is more than a replay takes (" +
                                std::to_string(StepIndex::kMaxEntries) + ")");
    }
    // No counting pass to reserve room first (it cost a read of every page of a big trace's
    // entries). A step consumes at least one entry, so there are never more steps than entries:
    // where that many would pass spillFromBytes(), the steps go to their temporary file from the
    // first one (a reserve there holds only address space) instead of doubling in memory up to
    // the threshold and then being copied into the file; below it a doubling copy is small.
    if (e.size() * sizeof(TraceStep) > spillFromBytes()) steps.reserve(e.size());
    std::size_t begin = 0;
    SpillArray<RecordedEntry>::Walk walk(e);
    for (std::size_t i = 0; i < e.size(); ++i) {
        walk.at(i);
        const EventAction a = e[i].action;
        if (isSegmentEvent(a) || a == EventAction::Snapshot) continue;
        TraceStep step;
        step.begin = begin;
        step.program = i;
        step.end = i + 1;
        if (a == EventAction::FreeRequested) {
            const bool adjacent = i + 1 < e.size() && e[i + 1].action == EventAction::FreeCompleted &&
                                  e[i + 1].address == e[i].address;
            if (adjacent) {
                step.end = i + 2;
                ++i;
            } else {
                step.pendingFree = true;
            }
        }
        steps.push_back(step);
        begin = step.end;
    }
    // Segment events after the last program event (an empty_cache() at the end of the program).
    bool trailing = false;
    for (std::size_t i = begin; i < e.size(); ++i) trailing = trailing || isSegmentEvent(e[i].action);
    if (trailing) steps.push_back(TraceStep{begin, kNoEntry, e.size(), false});
    e.forget(0, e.size());
    steps.doneWriting();
    return steps;
}

std::vector<StepSegmentEvent> TraceSteps::segmentEvents(const RecordedTrace& trace) {
    const SpillArray<TraceStep> steps = cut(trace);
    SpillArray<TraceStep>::Walk stepWalk(steps);
    SpillArray<RecordedEntry>::Walk entryWalk(trace.entries);
    std::vector<StepSegmentEvent> events;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        stepWalk.at(k);
        entryWalk.at(steps[k].begin);
        for (std::size_t i = steps[k].begin; i < steps[k].end; ++i) {
            const RecordedEntry& e = trace.entries[i];
            if (isSegmentEvent(e.action)) events.push_back(StepSegmentEvent{k, e.action, e.address, e.size});
        }
    }
    return events;
}

}  // namespace allocscope::alloc
