#pragma once
// JSON in PyTorch's shapes, for verbs that print what the allocator ended with:
// memory_stats() as one flat object of its 122 keys, and snapshot()["segments"] with PyTorch's
// field names and block states.
#include <string>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/core/StackTable.h"

namespace allocscope::cli {

// {"active.all.allocated": 152, ...} sorted by key, one key per line.
std::string statsToJson(const alloc::DeviceStats& stats);
// [{"device": 0, "address": ..., "blocks": [...]}, ...]; frames from `stacks` when given (an
// unknown line, storage::FrameLine, as 2**64-1 like TorchDynamo writes it); segment_pool_id from
// SegmentInfo::poolId.
std::string segmentsToJson(const std::vector<alloc::SegmentInfo>& segments, long long device,
                           const alloc::StackTable* stacks);

}  // namespace allocscope::cli
