#pragma once
// Cuts a RecordedTrace into its replay steps (the rule is TraceSteps.h's) one step at a time, as
// a replay reaches them. A big snapshot has tens of millions of steps: cut ahead of the replay,
// they took a pass over every entry and a temporary file of 16 bytes per step (192 MB for a 1 GB
// snapshot), written and read back once (issue #18). A cursor looks at most one entry past the
// step it returns (a free_requested's adjacent free_completed).
#include <cstddef>

#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {

class StepCursor {
public:
    // Throws std::length_error for a trace of more than StepIndex::kMaxEntries entries.
    explicit StepCursor(const RecordedTrace& trace);

    // The next step into `step`; false after the last (`step` is then left as it was).
    bool next(TraceStep& step);
    // How many steps next() has returned.
    std::size_t count() const { return count_; }

private:
    const RecordedTrace& trace_;
    std::size_t entry_ = 0;  // the first entry not yet in a step
    std::size_t count_ = 0;
    bool done_ = false;
};

}  // namespace allocscope::alloc
