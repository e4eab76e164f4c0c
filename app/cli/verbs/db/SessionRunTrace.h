#pragma once
// A session's run as a recorded trace (for `oom --db S --run N`): its stored events, in order,
// become trace entries in PyTorch's vocabulary (the state a truncated history was restored from
// is left out), with their stacks and the run's config as its allocator settings. Replaying it
// under its own settings reproduces the run, so the OOM answer reads a session and a snapshot
// with the same code.
#include <optional>
#include <string>

#include "allocator/replay/RecordedTrace.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {

// nullopt + one "allocscope-cli: <what> (<where>)" line and `code` set: no sqlite3, a session
// that cannot be read, no such run.
std::optional<alloc::RecordedTrace> sessionRunTrace(VerbContext& ctx, const std::string& session, int run, int& code);

#if !ALLOCSCOPE_HAVE_STORAGE
inline std::optional<alloc::RecordedTrace> sessionRunTrace(VerbContext& ctx, const std::string& session, int, int& code) {
    ctx.err << "allocscope-cli: this allocscope-cli was built without session files (no sqlite3) (--db " << session << ")\n";
    code = kExitBadInput;
    return std::nullopt;
}
#endif

}  // namespace allocscope::cli
