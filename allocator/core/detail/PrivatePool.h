#pragma once
// PyTorch's PrivatePool: the memory pool of a CUDA graph (or of several graphs that share it) or
// of a torch.cuda.MemPool. It has its own small and large BlockPools, so its blocks never serve
// requests routed elsewhere, and its memory counts in every global statistic like the default
// pools' (reference §12).
#include <cstdint>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/PoolId.h"
#include "allocator/core/detail/BlockPool.h"

namespace allocscope::alloc::detail {

struct PrivatePool {
    PrivatePool(NodeArena* arena, PoolId poolId, PrivatePoolOptions poolOptions)
        : id(poolId), options(poolOptions), large(arena, false, this), small(arena, true, this) {}
    ~PrivatePool() {
        // The sets hold nodes from the allocator's arena: give them back while it exists.
        large.blocks.clear();
        large.unmapped.clear();
        small.blocks.clear();
        small.unmapped.clear();
    }
    PrivatePool(const PrivatePool&) = delete;
    PrivatePool& operator=(const PrivatePool&) = delete;

    PoolId id;
    PrivatePoolOptions options;
    int useCount = 1;             // owners (graphs, the MemPool, active use_mem_pool contexts)
    std::uint64_t segments = 0;   // live segments and reservations (c10's cudaMalloc_count)
    bool freeable = false;        // use count reached 0: empty_cache() may release its segments
    std::uint64_t freeableSince = 0;  // when it became freeable (Impl::freeableCount_), for the order
    BlockPool large;
    BlockPool small;
};

}  // namespace allocscope::alloc::detail
