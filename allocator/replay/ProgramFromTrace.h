#pragma once
// A recorded trace as a program to run under other configs (`compare` and `recommend` in the CLI,
// the GUI's Compare tab): the trace is replayed once under its recorded settings — the replay
// infers explicit empty_cache() calls and places pending frees — and the ops it applied become the
// program. New segments are then placed by each run's simulated device, not by the driver model of
// `replay`, so what-ifs run this way are close but not address-exact.
#include <cstdint>
#include <optional>

#include "allocator/core/Op.h"
#include "allocator/replay/HistoryWindow.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

struct ProgramFromTraceOptions {
    std::optional<double> memoryFraction;  // the comparison's own, set before the first op
    std::uint64_t totalMemory = 0;
    std::uint64_t otherMemory = 0;
};

// Recorded settings that PyTorch refuses, or backend:cudaMallocAsync (which keeps no segments to
// replay into), replay under the defaults. The replay's own set_memory_fraction ops are dropped:
// the comparison sets its fraction before the first op.
Program programFromTrace(const RecordedTrace& trace, const ProgramFromTraceOptions& options);
// The same, and `truncation` set (ReplayResult::truncation of the replay that made the program)
// when the recorded history starts mid-run: the program then starts from the rebuilt state, and
// the peaks and counts of its runs cover only the recorded window (compare/WindowFigures).
Program programFromTrace(const RecordedTrace& trace, const ProgramFromTraceOptions& options,
                         std::optional<HistoryTruncation>& truncation);

}  // namespace allocscope::alloc
