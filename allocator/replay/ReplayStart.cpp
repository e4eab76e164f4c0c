#include "allocator/replay/ReplayStart.h"

#include <exception>

namespace allocscope::alloc {

ReplayStart startReplay(const RecordedTrace& trace, const std::optional<TraceStep>& firstStep, const ReplayOptions& options,
                        PoolRouting* routing, const HistoryWindow& window) {
    ReplayStart start;
    start.run = std::make_unique<ReplayRun>(trace, firstStep, options);
    start.run->setRouting(routing);
    if (!window.truncated()) return start;
    try {
        start.restored = start.run->restore(window.initialSegments());
        start.restoredState = true;
    } catch (const std::exception& e) {
        // restoreSegments stopped half-way: that allocator is of no use.
        start.problem = e.what();
        start.run = std::make_unique<ReplayRun>(trace, firstStep, options);
        start.run->setRouting(routing);
    }
    return start;
}

}  // namespace allocscope::alloc
