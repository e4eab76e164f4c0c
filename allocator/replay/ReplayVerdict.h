#pragma once
// The verdict line of a replay checked against its recording (a snapshot under its own config, or
// a what-if with --compare-with): "exact" only when every recorded segment event, every block
// address and the final layout (address, size, requested size, state, stream, pool of every block)
// match and the program never raised where PyTorch did not; otherwise "diverged at trace entry K:
// <what differs>". A diverged report must not read as PyTorch's run, so that line never contains
// the word "exact". Here (not in app/cli) because sessions store it with each replayed run
// (storage's RunVerdictTable) as well as the CLI printing it.
#include <cstddef>
#include <optional>
#include <string>

#include "allocator/replay/TraceReplayer.h"

namespace allocscope::alloc {

// `entries`: the number of trace entries (the final snapshot comes after the last of them).
std::string replayVerdict(const ReplayResult& result, std::size_t entries);
// The trace entry of the first difference, when the verdict names one (nullopt when exact, or for
// an allocation that failed, which names its op).
std::optional<std::size_t> replayVerdictEntry(const ReplayResult& result, std::size_t entries);

}  // namespace allocscope::alloc
