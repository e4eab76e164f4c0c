#pragma once
// PyTorch's snapshot structure (torch.cuda.memory._snapshot()["segments"]): one SegmentInfo per
// cudaMalloc'd segment, or per contiguous mapped range of an expandable segment, sorted by
// address, each with its blocks in address order.
#include <cstdint>
#include <string_view>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/core/PoolId.h"

namespace allocscope::alloc {

enum class BlockState : std::uint8_t {
    ActiveAllocated,    // handed out to the program
    ActivePendingFree,  // freed, waiting for events of streams that used it (record_stream)
    Inactive,           // free, cached in its pool
};
// "active_allocated", "active_pending_free", "inactive".
std::string_view blockStateName(BlockState state);

struct BlockInfo {
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    std::uint64_t requestedSize = 0;  // stale for inactive blocks, 0 for never-used remainders
    BlockState state = BlockState::Inactive;
    std::uint32_t stackId = 0;
};

struct SegmentInfo {
    std::uint64_t address = 0;
    std::uint64_t totalSize = 0;
    std::uint64_t allocatedSize = 0;  // sum of allocated blocks
    std::uint64_t activeSize = 0;     // allocated + pending-free
    std::uint64_t requestedSize = 0;  // sum of requested sizes of active blocks
    StreamId stream = 0;
    PoolKind pool = PoolKind::Large;  // segment_type "small" / "large"
    PoolId poolId;                    // segment_pool_id: (0, 0) = the default pool
    bool isExpandable = false;
    std::uint32_t stackId = 0;        // the segment's creation stack
    std::vector<BlockInfo> blocks;
};

}  // namespace allocscope::alloc
