#pragma once
// The ReplayRun a replay (and each re-run of its prefix) starts from: a fresh one, or, when the
// recorded history starts mid-run (HistoryWindow), one holding the state before the first
// recorded entry. A state that cannot be rebuilt here (a device smaller than the recording's, an
// expandable range that is not whole pages) gives a fresh run and says why: the replay then goes
// on as for a whole history, its frees of unknown blocks noted.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/replay/HistoryWindow.h"
#include "allocator/replay/ReplayRun.h"

namespace allocscope::alloc {

struct ReplayStart {
    std::unique_ptr<ReplayRun> run;
    std::vector<Event> restored;  // the events that rebuilt the state (cause "restored")
    bool restoredState = false;
    std::string problem;          // why a truncated history's state could not be rebuilt
};

// `firstStep`: the trace's first step, if it has one (see ReplayRun).
ReplayStart startReplay(const RecordedTrace& trace, const std::optional<TraceStep>& firstStep, const ReplayOptions& options,
                        PoolRouting* routing, const HistoryWindow& window);

}  // namespace allocscope::alloc
