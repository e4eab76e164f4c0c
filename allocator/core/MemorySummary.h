#pragma once
// torch.cuda.memory_summary(device, abbreviated), character for character (torch/cuda/memory.py).
#include <string>

#include "allocator/core/DeviceStats.h"

namespace allocscope::alloc {

std::string formatMemorySummary(const DeviceStats& stats, int device, bool abbreviated);

}  // namespace allocscope::alloc
