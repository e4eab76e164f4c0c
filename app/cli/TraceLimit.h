#pragma once
// The one place where a verb that replays or runs a recorded trace decides its memory limit
// (issue 35): with --total-memory, --memory-fraction or --gpu the user's device (said to be
// given); without them the limit is inferred from the trace's recorded OOM (LimitInference) or,
// with no OOM, the default preset stays (the recorded peak a lower bound). `replay`, `compare`,
// `recommend`, `import` and `oom` all come through here and print limit.describe().
#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/AllocatorConfig.h"
#include "allocator/replay/LimitInference.h"
#include "allocator/replay/RecordedTrace.h"
#include "app/cli/DeviceOptions.h"

namespace allocscope::cli {

// Did the user choose the device (or its memory fraction) on the command line?
bool limitGiven(const ResolvedDevice& device, const DeviceOptions& options);

// The limit `trace` replays under with `recorded` (its recorded config; PyTorch's defaults when
// it has none that PyTorch accepts).
alloc::MemoryLimit traceLimit(const alloc::RecordedTrace& trace, const alloc::AllocatorConfig& recorded,
                              const ResolvedDevice& device, const DeviceOptions& options);

// The comparison device that realises the limit.
alloc::CompareDevice compareDeviceOf(const alloc::MemoryLimit& limit);

}  // namespace allocscope::cli
