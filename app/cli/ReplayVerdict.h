#pragma once
// The verdict line of a replay checked against its recording (a snapshot under its own config, or
// a what-if with --compare-with): "exact" only when every recorded segment event, every block
// address and the final layout (address, size, requested size, state, stream, pool of every block)
// match and the program never raised where PyTorch did not; otherwise "diverged at trace entry K:
// <what differs>". A diverged report must not read as PyTorch's run, so that line never contains
// the word "exact".
#include <cstddef>
#include <string>

#include "allocator/replay/TraceReplayer.h"

namespace allocscope::cli {

// `entries`: the number of trace entries (the final snapshot comes after the last of them).
std::string replayVerdict(const alloc::ReplayResult& result, std::size_t entries);

}  // namespace allocscope::cli
