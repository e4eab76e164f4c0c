// CachingAllocator::Impl: the paths that give memory back to the driver (garbage collection,
// oversize release, empty_cache / the OOM retry) and the OOM report. §4.1, §4.3, §4.5, §7.
#include <iterator>

#include "allocator/core/FormatSize.h"
#include "allocator/core/detail/AllocatorImpl.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc {

using detail::Block;
using detail::BlockPool;

// release_block(): cudaFree of a whole, free, non-expandable segment.
void CachingAllocator::Impl::releaseBlock(Block* block) {
    BlockPool& pool = *block->pool;
    stats_.num_device_free += 1;
    emit(EventAction::SegmentFree, block->address, block->size, block->size, block->stream, block->address,
         block->segment->stackId, pool.kind, poolIdOf(pool));
    device_.freeSegment(block->address, block->size);
    totalAllocatedMemory_ -= block->size;
    if (pool.owner != nullptr) --pool.owner->segments;
    decrease(stats_.segment, pool.statType, 1);
    decrease(stats_.reserved_bytes, pool.statType, static_cast<std::int64_t>(block->size));
    if (block->size >= config_.maxSplitSize) stats_.oversize_segments.decrease(1);
    pool.eraseFree(block);
    deleteSegment(block->segment);
    deleteBlock(block);
}

// release_blocks(): every whole free segment is freed; free expandable blocks are unmapped page
// by page, and a reservation left entirely unmapped is given back.
void CachingAllocator::Impl::releaseBlocks(BlockPool& pool) {
    std::vector<Block*> toUnmap;
    for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
        Block* block = *it;
        ++it;
        if (block->expandable()) {
            toUnmap.push_back(block);  // unmapping mutates the set: gather first
        } else if (!block->isSplit()) {
            releaseBlock(block);
        }
    }
    for (Block* block : toUnmap) {
        unmapBlock(block);
        if (!block->mapped && !block->isSplit()) releaseExpandableSegment(block);
    }
}

// synchronize_and_free_events(): every pending free completes; counts a device-wide sync.
void CachingAllocator::Impl::synchronizeAndFreeEvents() {
    stats_.num_sync_all_streams += 1;
    completeAllPending();
}

// release_cached_blocks(): the default pools (only while no routing is active: event queries
// are illegal during a capture), then every freeable private pool.
void CachingAllocator::Impl::releaseCachedBlocks() {
    if (routings_.empty()) {
        synchronizeAndFreeEvents();
        releaseBlocks(large_);
        releaseBlocks(small_);
    }
    releaseFreeablePools();
}

void CachingAllocator::Impl::emptyCache() {
    CauseScope scope(*this, EventCause::EmptyCache);
    releaseCachedBlocks();
}

// release_cached_blocks(mempool_id) for a private pool: nothing unless that pool is freeable;
// then only its own events are synchronised (still counted as a sync of all streams).
void CachingAllocator::Impl::emptyCache(PoolId id) {
    if (id.isDefault()) {
        emptyCache();
        return;
    }
    auto it = privatePools_.find(id);
    if (it == privatePools_.end() || !it->second->freeable) return;
    CauseScope scope(*this, EventCause::EmptyCache);
    detail::PrivatePool& pool = *it->second;
    stats_.num_sync_all_streams += 1;
    completeAllPending(&pool);
    releaseBlocks(pool.small);
    releaseBlocks(pool.large);
    if (pool.segments == 0) privatePools_.erase(it);
}

// release_available_cached_blocks(): free oversize cached segments (max_split_size set only).
bool CachingAllocator::Impl::releaseAvailableCachedBlocks(BlockPool& pool, StreamId stream,
                                                         std::uint64_t size) {
    const std::uint64_t maxSplit = config_.maxSplitSize;
    if (maxSplit == kUnlimited) return false;
    CauseScope scope(*this, EventCause::OversizeRelease);
    const std::uint64_t keySize = size < maxSplit ? maxSplit : size;
    auto& blocks = pool.blocks;
    auto it = blocks.lower_bound(detail::SizeKey{stream, keySize, 0});
    if (it == blocks.end() || it->stream != stream || it->expandable) {
        // No single block is large enough: free oversize blocks from the largest down.
        if (it == blocks.begin()) return false;
        std::uint64_t released = 0;
        --it;
        while (released < keySize && it->size() >= maxSplit && it->stream == stream) {
            auto current = it;
            const bool isFirst = current == blocks.begin();
            if (!isFirst) --it;
            if (!current->expandable) {
                released += current->size();
                releaseBlock(current->block);
            }
            if (isFirst) break;
        }
        return released >= keySize;
    }
    releaseBlock(it->block);
    return true;
}

// garbage_collect_cached_blocks(): §4.1. Frees whole cached large segments whose age (pool
// clock ticks since they became free) is at least the average, pass after pass, until the
// reserved bytes are below threshold x cap. A pass always runs to its end.
void CachingAllocator::Impl::garbageCollectCachedBlocks() {
    CauseScope scope(*this, EventCause::Gc);
    const auto gcThreshold = static_cast<std::uint64_t>(config_.garbageCollectionThreshold *
                                                        static_cast<double>(*allowedMax_));
    if (totalAllocatedMemory_ <= gcThreshold) return;
    const std::uint64_t target = totalAllocatedMemory_ - gcThreshold;
    std::uint64_t reclaimed = 0;
    const std::uint64_t clock = large_.getFreeBlocksCallCount;
    std::uint64_t totalAge = 0;
    std::uint64_t freeable = 0;
    for (const Block* block : large_.blocks) {
        if (!block->isSplit()) {
            totalAge += clock - block->gcCountBase;
            ++freeable;
        }
    }
    if (freeable == 0) return;
    bool blockFreed = true;
    while (reclaimed < target && blockFreed && freeable > 0) {
        const double ageThreshold = static_cast<double>(totalAge) / static_cast<double>(freeable);
        blockFreed = false;
        for (auto it = large_.blocks.begin(); it != large_.blocks.end();) {
            Block* block = *it;
            ++it;
            const std::uint64_t age = clock - block->gcCountBase;
            if (!block->isSplit() && !block->expandable() && static_cast<double>(age) >= ageThreshold) {
                blockFreed = true;
                reclaimed += block->size;
                totalAge -= age;
                --freeable;
                releaseBlock(block);
            }
        }
    }
}

// The OOM: §4.5. Trace entry, num_ooms, and PyTorch's message.
void CachingAllocator::Impl::reportOom(std::uint64_t origSize, std::uint64_t size, std::uint64_t allocSize,
                                       StreamId stream) {
    const std::uint64_t deviceFree = device_.freeMemory();
    const std::uint64_t deviceTotal = device_.totalMemory();
    std::string allowedInfo;
    if (allowedMax_) allowedInfo = formatSize(*allowedMax_) + " allowed; ";
    // NVML's per-process line: only the simulated device knows what "this process" holds.
    std::string procInfo;
    if (const auto* simulated = dynamic_cast<const SimulatedDevice*>(&device_)) {
        if (const auto inUse = simulated->processMemoryInUse()) {
            procInfo = "Including non-PyTorch memory, this process has " + formatSize(*inUse) +
                       " memory in use. ";
        }
    }
    emit(EventAction::Oom, deviceFree, size, size, stream, 0, 0, poolFor(size).kind);
    stats_.num_ooms += 1;
    // PyTorch's "allocated in private pools" sums the *free* cached blocks of the private pools.
    const std::uint64_t inPrivatePools = privatePoolFreeBytes();
    const auto allocated = static_cast<std::uint64_t>(stats_.allocated_bytes[kAggregate].current);
    const auto reserved = static_cast<std::uint64_t>(stats_.reserved_bytes[kAggregate].current);
    const std::string privatePoolMessage =
        inPrivatePools > 0 ? "with " + formatSize(inPrivatePools) + " allocated in private pools (e.g., CUDA Graphs), "
                           : std::string();
    lastOom_.requestedSize = origSize;
    lastOom_.roundedSize = size;
    lastOom_.allocSize = allocSize;
    lastOom_.deviceFree = deviceFree;
    lastOom_.deviceTotal = deviceTotal;
    lastOom_.message = "CUDA out of memory. Tried to allocate " + formatSize(allocSize) + ". GPU 0 has a total capacity of " +
                       formatSize(deviceTotal) + " of which " + formatSize(deviceFree) + " is free. " + procInfo +
                       allowedInfo + "Of the allocated memory " + formatSize(allocated + inPrivatePools) +
                       " is allocated by PyTorch, " + privatePoolMessage + "and " +
                       formatSize(reserved - allocated - inPrivatePools) +
                       " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
                       "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
                       "documentation for Memory Management  "
                       "(https://docs.pytorch.org/docs/stable/notes/cuda.html"
                       "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)";
}

}  // namespace allocscope::alloc
