#pragma once
// A recorded trace (snapshot pickle or RMM CSV) as a program that `compare` and `recommend` run
// under every config they try.
#include <optional>
#include <string>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/WindowFigures.h"
#include "allocator/core/Op.h"
#include "allocator/replay/MemoryLimit.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {

struct TraceProgram {
    alloc::Program program;
    std::string sourceKind;  // "snapshot" or "csv", by the file's content (storage::TraceFile)
    std::optional<alloc::MemoryLimit> limit;  // inferLimit: what traceLimit decided, and from what
    // Set when the recorded history starts mid-run (a ring buffer that overflowed): the figures
    // its runs report that cover only the recorded window.
    std::optional<alloc::WindowFigures> window;
};

// Reads the trace file (storage::TraceFile) and turns its first device's trace into a program
// (alloc::programFromTrace, which says how). On bad input prints one
// `allocscope-cli: <what> (<file>[: <where inside>])` line, sets `code` to kExitBadInput and
// returns nullopt.
// `inferLimit` (no --total-memory, --memory-fraction or --gpu given): the limit is inferred from
// the trace's recorded OOM (LimitInference) and `device` becomes the device that realises it; the
// program is then made with room for the failed request, which it tries and drops (as a replay
// whose OOM vanished does), so every config's run has the same ops and op indexes.
std::optional<TraceProgram> traceProgram(VerbContext& ctx, const std::string& path, alloc::CompareDevice& device,
                                         bool inferLimit, int& code);

}  // namespace allocscope::cli
