#pragma once
// What `replay` says about a recorded history that starts mid-run (ReplayResult::truncation: a
// ring buffer that overflowed, a state-only snapshot). The first line starts "history truncated:"
// and says how much was live before the first recorded entry; the second names the statistics
// that count only the recorded window (they cannot match PyTorch's, which counted from the start
// of the process). Empty for a whole history. Lines without a newline, ready to print as they are.
#include <string>
#include <vector>

#include "allocator/replay/TraceReplayer.h"

namespace allocscope::cli {

std::vector<std::string> truncationReport(const alloc::ReplayResult& result);

}  // namespace allocscope::cli
