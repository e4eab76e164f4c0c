// CachingAllocator::Impl: private memory pools (reference §12; c10's createOrIncrefPool,
// beginAllocateToPool, endAllocateToPool, releasePool, get_pool, try_mempool_fallback and the
// freeable-pool part of release_cached_blocks).
#include <algorithm>

#include "allocator/core/detail/AllocatorImpl.h"

namespace allocscope::alloc {

using detail::Block;
using detail::BlockPool;
using detail::PrivatePool;

BlockPool& CachingAllocator::Impl::blockPoolFor(PoolId id, bool small) {
    if (id.isDefault()) return small ? small_ : large_;
    auto it = privatePools_.find(id);
    if (it == privatePools_.end()) {
        it = privatePools_.emplace(id, std::make_unique<PrivatePool>(&arena_, id, PrivatePoolOptions{})).first;
        it->second->useCount = 0;
    }
    return small ? it->second->small : it->second->large;
}

void CachingAllocator::Impl::createPool(PoolId id, PrivatePoolOptions options) {
    if (id.isDefault()) return;
    auto it = privatePools_.find(id);
    if (it == privatePools_.end()) {
        privatePools_.emplace(id, std::make_unique<PrivatePool>(&arena_, id, options));
        return;
    }
    it->second->options = options;
    if (it->second->useCount++ == 0) it->second->freeable = false;
}

void CachingAllocator::Impl::beginAllocateToPool(PoolId id, std::optional<StreamId> stream, bool capture) {
    if (id.isDefault()) return;
    auto it = privatePools_.find(id);
    if (it == privatePools_.end()) {
        privatePools_.emplace(id, std::make_unique<PrivatePool>(&arena_, id, PrivatePoolOptions{}));
    } else if (it->second->useCount++ == 0) {
        it->second->freeable = false;
    }
    routings_.push_back(Routing{id, stream, capture});
}

bool CachingAllocator::Impl::endAllocateToPool(PoolId id) {
    for (auto it = routings_.rbegin(); it != routings_.rend(); ++it) {
        if (it->id == id) {
            routings_.erase(std::next(it).base());
            return true;
        }
    }
    return false;
}

bool CachingAllocator::Impl::releasePool(PoolId id) {
    auto it = privatePools_.find(id);
    if (it == privatePools_.end() || it->second->useCount == 0) return false;
    if (--it->second->useCount == 0) {
        it->second->freeable = true;
        it->second->freeableSince = ++freeableCount_;
    }
    return true;
}

bool CachingAllocator::Impl::captureUnderway() const {
    return std::any_of(routings_.begin(), routings_.end(), [](const Routing& r) { return r.capture; });
}

// get_pool(): the newest routing whose stream matches wins; otherwise the default pools.
BlockPool& CachingAllocator::Impl::getPool(std::uint64_t size, StreamId stream) {
    for (auto it = routings_.rbegin(); it != routings_.rend(); ++it) {
        if (it->stream && *it->stream != stream) continue;
        PrivatePool& pool = *privatePools_.at(it->id);
        return size <= kSmallSize ? pool.small : pool.large;
    }
    return poolFor(size);
}

// A default-pool request that could not get new memory may use a free block of a MemPool made
// with use_on_oom=True (searched in pool-id order; no new memory is taken for it).
Block* CachingAllocator::Impl::tryMempoolFallback(const BlockPool& pool, StreamId stream, std::uint64_t size) {
    if (pool.owner != nullptr) return nullptr;
    for (auto& [id, privatePool] : privatePools_) {
        if (!privatePool->options.useOnOom) continue;
        BlockPool& candidate = pool.isSmall ? privatePool->small : privatePool->large;
        if (Block* block = getFreeBlock(candidate, stream, size)) return block;
    }
    return nullptr;
}

std::uint64_t CachingAllocator::Impl::privatePoolFreeBytes() const {
    std::uint64_t bytes = 0;
    for (const auto& [id, pool] : privatePools_) {
        for (const BlockPool* blocks : {&pool->large, &pool->small}) {
            for (const detail::FreeEntry& entry : blocks->blocks) bytes += entry.size();
        }
    }
    return bytes;
}

// The freeable pools' whole free segments go back to the driver (small, then large, as c10
// does); a freeable pool that owns no segment any more is deleted. c10 walks graph_pools_freeable,
// a hash map keyed by pool id, whose order no id of ours can reproduce (a replay's pools have
// inferred ids): the pools go in the order they became freeable, which is the order a replay
// learns from the recording's releases (two_stream_captures: g3's pool released before g1's).
void CachingAllocator::Impl::releaseFreeablePools() {
    std::vector<PrivatePool*> order;
    for (const auto& [id, pool] : privatePools_) {
        if (pool->freeable) order.push_back(pool.get());
    }
    std::sort(order.begin(), order.end(), [](const PrivatePool* a, const PrivatePool* b) { return a->freeableSince < b->freeableSince; });
    for (PrivatePool* pool : order) {
        releaseBlocks(pool->small);
        releaseBlocks(pool->large);
        if (pool->segments == 0) privatePools_.erase(pool->id);
    }
}

std::optional<PoolId> CachingAllocator::poolOfAddress(std::uint64_t address) const {
    for (const detail::Segment* segment : impl_->segments_) {
        if (address >= segment->address && address - segment->address < segment->size) {
            const PrivatePool* owner = segment->pool->owner;
            return owner != nullptr ? owner->id : PoolId{};
        }
    }
    return std::nullopt;
}

}  // namespace allocscope::alloc
