#pragma once
// A recorded trace (snapshot pickle or RMM CSV) as a program that `compare` and `recommend` run
// under every config they try.
#include <optional>
#include <string>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/core/Op.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {

// Replays the trace once under its recorded config (the replay infers explicit empty_cache()
// calls and places pending frees); the ops it applied become the program. New segments are placed
// by the simulated device, not by the driver model of `replay`, so what-ifs are close but not
// address-exact. On bad input prints one `allocscope-cli: <what> (<where>)` line, sets `code` to
// kExitBadInput and returns nullopt.
std::optional<alloc::Program> traceProgram(VerbContext& ctx, const std::string& path,
                                           const alloc::CompareDevice& device, int& code);

}  // namespace allocscope::cli
