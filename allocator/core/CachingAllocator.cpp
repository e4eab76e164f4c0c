// CachingAllocator: the public API and PyTorch's hot path (malloc, free, best-fit search, split,
// merge). The release paths live in detail/AllocatorRelease.cpp, expandable segments in
// detail/ExpandableSegments.cpp. Function names follow c10/cuda/CUDACachingAllocator.cpp so a
// reader can compare side by side.
#include "allocator/core/CachingAllocator.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "allocator/core/MemorySummary.h"
#include "allocator/core/detail/AllocatorImpl.h"

namespace allocscope::alloc {

using detail::Block;
using detail::BlockPool;
using detail::Segment;

// ---------------------------------------------------------------------------------------------
// Impl: construction and helpers

CachingAllocator::Impl::Impl(const AllocatorConfig& config, DeviceMemory& device, EventSink* sink)
    : config_(config), device_(device), sink_(sink), large_(&arena_, false), small_(&arena_, true) {
    stats_.max_split_size =
        config_.maxSplitSize == kUnlimited ? -1 : static_cast<std::int64_t>(config_.maxSplitSize);
    if (config_.perProcessMemoryFraction) setMemoryFraction(*config_.perProcessMemoryFraction);
}

CachingAllocator::Impl::~Impl() {
    // The sets hold nodes from arena_; clear them before the arena goes (members are destroyed
    // in reverse order, so this is belt and braces).
    privatePools_.clear();
    large_.blocks.clear();
    large_.unmapped.clear();
    small_.blocks.clear();
    small_.unmapped.clear();
}

Segment* CachingAllocator::Impl::newSegment() {
    Segment* segment = segmentObjects_.acquire();
    segment->index = static_cast<std::uint32_t>(segments_.size());
    segments_.push_back(segment);
    return segment;
}

void CachingAllocator::Impl::deleteSegment(Segment* segment) {
    Segment* last = segments_.back();
    segments_[segment->index] = last;
    last->index = segment->index;
    segments_.pop_back();
    segmentObjects_.release(segment);
}

void CachingAllocator::Impl::setMemoryFraction(double fraction) {
    if (!(fraction >= 0.0)) return;  // negative or NaN: PyTorch refuses; the caller reports it
    if (fraction >= 1.0) {
        allowedMax_.reset();
        return;
    }
    allowedMax_ = static_cast<std::uint64_t>(fraction * static_cast<double>(device_.totalMemory()));
}

// round_size(): §1.2-1.4.
std::uint64_t CachingAllocator::Impl::roundSize(std::uint64_t size) const {
    if (size < kMinBlockSize) return kMinBlockSize;
    const std::uint64_t divisions = config_.roundupDivisionsFor(size);
    if (divisions > 1 && size > kMinBlockSize * divisions) {
        // roundup_power2_next_division
        if (std::has_single_bit(size)) return size;
        const std::uint64_t floor = std::bit_floor(size);
        const std::uint64_t step = floor >> (std::bit_width(divisions) - 1);
        if (step == 0) return floor << 1;
        const std::uint64_t roundedFloor = size & ~(step - 1);
        return roundedFloor == size ? size : roundedFloor + step;
    }
    return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

// get_allocation_size(): §1.6.
std::uint64_t CachingAllocator::Impl::allocationSize(std::uint64_t size) const {
    if (size <= kSmallSize) return kSmallBuffer;
    if (size < kMinLargeAlloc) return config_.largeSegmentSize;
    return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

// ---------------------------------------------------------------------------------------------
// malloc

std::optional<std::uint64_t> CachingAllocator::Impl::malloc(std::uint64_t origSize, StreamId stream,
                                                           std::uint32_t stackId) {
    if (origSize == 0) return std::nullopt;
    if (origSize >= kOneExaByte) {
        // CudaCachingAllocator::allocate refuses before the device allocator runs: no stats.
        lastOom_ = OomInfo{};
        lastOom_.requestedSize = origSize;
        lastOom_.message = "CUDA out of memory. Tried to allocate more than 1EB memory.";
        return std::nullopt;
    }
    // process_events: in the simulation, pending frees complete only when the program says so
    // (completePendingFree / synchronize), so there is nothing to poll here.
    const std::uint64_t size = roundSize(origSize);
    BlockPool& pool = getPool(size, stream);
    const std::uint64_t allocSize = allocationSize(size);

    Block* block = getFreeBlock(pool, stream, size);
    if (block == nullptr) {
        if (gcEnabled()) garbageCollectCachedBlocks();
        block = allocBlock(pool, stream, size, allocSize, false, stackId);
        if (block == nullptr) block = tryMempoolFallback(pool, stream, size);
        if (block == nullptr && releaseAvailableCachedBlocks(pool, stream, size)) {
            block = allocBlock(pool, stream, size, allocSize, false, stackId);
        }
        // While any routing is active (a capture, use_mem_pool) PyTorch 2.11 skips the retry.
        if (block == nullptr && routings_.empty()) {
            {
                CauseScope scope(*this, EventCause::OomRetry);
                releaseCachedBlocks();
            }
            block = allocBlock(pool, stream, size, allocSize, true, stackId);
        }
    }
    if (block == nullptr) {
        reportOom(origSize, size, allocSize, stream);
        return std::nullopt;
    }
    return allocFoundBlock(block, size, origSize, stackId)->address;
}

// get_free_block(): best fit, §3.1.
Block* CachingAllocator::Impl::getFreeBlock(BlockPool& pool, StreamId stream, std::uint64_t size) {
    if (gcEnabled()) ++pool.getFreeBlocksCallCount;
    auto& blocks = pool.blocks;
    auto it = blocks.lower_bound(detail::SizeKey{stream, size, 0});
    if (it == blocks.end() || it->stream != stream) return nullptr;
    if (it->expandable) {
        if (config_.expandableSegments) {
            // Best fit by the size the block could grow to (its free tail plus the following
            // unmapped range), so the growable tail is not always the one carved.
            auto expandableSize = [](const Block* b) {
                return b->size + (b->next != nullptr && !b->next->mapped ? b->next->size : 0);
            };
            auto next = std::next(it);
            while (it->expandable && next != blocks.end() && next->stream == stream &&
                   expandableSize(next->block) < expandableSize(it->block)) {
                it = next++;
            }
        } else {
            do {
                ++it;
            } while (it != blocks.end() && it->expandable && it->stream == stream);
            if (it == blocks.end() || it->stream != stream) return nullptr;
        }
    }
    const std::uint64_t maxSplit = config_.maxSplitSize;
    if (size < maxSplit && it->size() >= maxSplit) return nullptr;
    if (size >= maxSplit && it->size() >= size + config_.maxNonSplitRounding) return nullptr;
    if (tieObserver_) reportTie(pool, *it, size);
    // Left listed: allocFoundBlock takes it out, or lets a split's remainder keep its entry.
    return it->block;
}

// Every other free block equal to the chosen one (for expandable segments, equal also in the size
// it could grow to) in another segment could have been taken instead, had its segment lain lower:
// one call per such candidate, in address order, all with the same op, request and chosen block.
// Blocks of one segment keep their order whatever its base.
void CachingAllocator::Impl::reportTie(const BlockPool& pool, const detail::FreeEntry& chosen, std::uint64_t size) const {
    auto growable = [](const Block* b) { return b->size + (b->next != nullptr && !b->next->mapped ? b->next->size : 0); };
    for (auto next = pool.blocks.upper_bound(chosen);
         next != pool.blocks.end() && next->stream == chosen.stream && next->size() == chosen.size(); ++next) {
        if (next->block->segment == chosen.block->segment || next->expandable != chosen.expandable) continue;
        if (chosen.expandable && growable(next->block) != growable(chosen.block)) continue;
        BestFitTie tie;
        tie.opIndex = opIndex_;
        tie.requestSize = size;
        tie.blockSize = chosen.size();
        tie.stream = chosen.stream;
        tie.chosen = chosen.address();
        tie.chosenSegment = chosen.block->segment->address;
        tie.other = next->address();
        tie.otherSegment = next->block->segment->address;
        tieObserver_(tie);
    }
}

// should_split(): §3.2.
bool CachingAllocator::Impl::shouldSplit(const Block* block, std::uint64_t size) const {
    if (block->pool->owner != nullptr && block->pool->owner->options.noSplit) return false;
    const std::uint64_t remaining = block->size - size;
    if (block->pool->isSmall || config_.expandableSegments) return remaining >= kMinBlockSize;
    return size < config_.maxSplitSize && remaining > kSmallSize;
}

// alloc_found_block(): carve the low-address part, §3.3. Every source hands over a block still
// listed in its pool's free set (getFreeBlock, tryAllocateExpandableBlock, allocBlock): a split
// keeps the high-address remainder listed under its new key (BlockPool::relistFree), else the
// block leaves the set here. The set ends as PyTorch's erase and insert leave it.
Block* CachingAllocator::Impl::allocFoundBlock(Block* block, std::uint64_t size, std::uint64_t origSize,
                                               std::uint32_t stackId) {
    BlockPool& pool = *block->pool;
    const std::size_t st = pool.statType;
    const bool alreadySplit = block->isSplit();
    const bool expandable = block->expandable();
    if (shouldSplit(block, size)) {
        Block* remaining = block;
        block = newBlock();
        block->address = remaining->address;
        block->size = size;
        block->stream = remaining->stream;
        block->segment = remaining->segment;
        block->pool = &pool;
        block->prev = remaining->prev;
        if (block->prev != nullptr) {
            block->prev->next = block;
        } else {
            block->segment->head = block;
        }
        block->next = remaining;
        remaining->prev = block;
        remaining->address += size;
        remaining->size -= size;
        pool.relistFree(remaining, remaining->freePos);
        if (alreadySplit && !expandable) {
            decrease(stats_.inactive_split_bytes, st, static_cast<std::int64_t>(size));
        } else if (!expandable) {
            increase(stats_.inactive_split_bytes, st, static_cast<std::int64_t>(remaining->size));
            increase(stats_.inactive_split, st, 1);
        }
    } else {
        pool.eraseFree(block);
        if (alreadySplit && !expandable) {
            decrease(stats_.inactive_split_bytes, st, static_cast<std::int64_t>(block->size));
            decrease(stats_.inactive_split, st, 1);
        }
    }
    block->allocated = true;
    block->requestedSize = origSize;
    block->stackId = stackId;
    active_.insert(block->address, block);
    const auto blockSize = static_cast<std::int64_t>(block->size);
    increase(stats_.allocation, st, 1);
    increase(stats_.allocated_bytes, st, blockSize);
    increase(stats_.active, st, 1);
    increase(stats_.active_bytes, st, blockSize);
    increase(stats_.requested_bytes, st, static_cast<std::int64_t>(origSize));
    if (block->size >= config_.maxSplitSize) stats_.oversize_allocations.increase(1);
    emit(EventAction::Alloc, block->address, origSize, block->size, block->stream, block->segment->address,
         stackId, pool.kind);
    return block;
}

// alloc_block(): the fraction cap, then expandable mapping or cudaMalloc, §4.2.
Block* CachingAllocator::Impl::allocBlock(BlockPool& pool, StreamId stream, std::uint64_t size,
                                          std::uint64_t allocSize, bool isRetry, std::uint32_t stackId) {
    if (isRetry) stats_.num_alloc_retries += 1;
    if (allowedMax_ && totalAllocatedMemory_ + allocSize > *allowedMax_) return nullptr;
    if (config_.expandableSegments) return tryAllocateExpandableBlock(pool, stream, size, stackId);
    const std::optional<std::uint64_t> address = device_.allocateSegment(allocSize, stream);
    if (!address) return nullptr;
    totalAllocatedMemory_ += allocSize;
    if (pool.owner != nullptr) ++pool.owner->segments;
    Segment* segment = newSegment();
    segment->address = *address;
    segment->size = allocSize;
    segment->stream = stream;
    segment->pool = &pool;
    segment->stackId = stackId;
    Block* block = newBlock();
    block->address = *address;
    block->size = allocSize;
    block->stream = stream;
    block->segment = segment;
    block->pool = &pool;
    segment->head = block;
    pool.insertFree(block);  // listed, as allocFoundBlock expects
    increase(stats_.segment, pool.statType, 1);
    increase(stats_.reserved_bytes, pool.statType, static_cast<std::int64_t>(allocSize));
    if (allocSize >= config_.maxSplitSize) stats_.oversize_segments.increase(1);
    stats_.num_device_alloc += 1;
    emit(EventAction::SegmentAlloc, *address, allocSize, allocSize, stream, *address, stackId, pool.kind, poolIdOf(pool));
    return block;
}

// ---------------------------------------------------------------------------------------------
// free

bool CachingAllocator::Impl::free(std::uint64_t address) {
    Block* block = active_.find(address);
    if (block == nullptr || !block->allocated) return false;
    const std::size_t st = block->pool->statType;
    block->allocated = false;
    decrease(stats_.allocation, st, 1);
    decrease(stats_.allocated_bytes, st, static_cast<std::int64_t>(block->size));
    emit(EventAction::FreeRequested, block->address, block->requestedSize, block->size, block->stream,
         block->segment->address, block->stackId, block->pool->kind);
    if (block->size >= config_.maxSplitSize) stats_.oversize_allocations.decrease(1);
    if (!block->streamUses.empty()) {
        // insert_events: one event per recorded stream; the block waits for all of them.
        block->eventCount = static_cast<std::uint32_t>(block->streamUses.size());
        block->streamUses.clear();
        pending_.push_back(block);
    } else {
        freeBlock(block);
    }
    return true;
}

// free_block(): merge with free neighbours, back into the free set, one net inactive_split
// update (§3.4, §18.1).
void CachingAllocator::Impl::freeBlock(Block* block) {
    BlockPool& pool = *block->pool;
    emit(EventAction::FreeCompleted, block->address, block->requestedSize, block->size, block->stream,
         block->segment->address, block->stackId, pool.kind);
    active_.erase(block->address);
    const auto originalSize = static_cast<std::int64_t>(block->size);
    const auto requested = static_cast<std::int64_t>(block->requestedSize);
    std::int64_t netBlocks = 0;
    std::int64_t netBytes = 0;
    Block* candidates[2] = {block->prev, block->next};
    // The free-set entry of the first neighbour merged in, which `block` takes over.
    std::optional<detail::FreeSet::iterator> reuse;
    for (Block* candidate : candidates) {
        const std::uint64_t subsumed = tryMergeBlocks(block, candidate, pool, &reuse);
        if (subsumed > 0) {
            netBlocks -= 1;
            netBytes -= static_cast<std::int64_t>(subsumed);
        }
    }
    if (reuse) {
        pool.relistFree(block, *reuse);
    } else {
        pool.insertFree(block);
    }
    if (block->isSplit()) {
        netBlocks += 1;
        netBytes += static_cast<std::int64_t>(block->size);
    }
    const std::size_t st = pool.statType;
    if (!block->expandable()) {
        if (netBlocks > 0) increase(stats_.inactive_split, st, netBlocks);
        else if (netBlocks < 0) decrease(stats_.inactive_split, st, -netBlocks);
        if (netBytes > 0) increase(stats_.inactive_split_bytes, st, netBytes);
        else if (netBytes < 0) decrease(stats_.inactive_split_bytes, st, -netBytes);
    }
    decrease(stats_.active, st, 1);
    decrease(stats_.active_bytes, st, originalSize);
    decrease(stats_.requested_bytes, st, requested);
}

// try_merge_blocks(): absorb `src` into `dst` if it is free, idle and in the same mapped state.
// With `reuse` (free_block), the first mapped `src` leaves its free-set entry in *reuse for `dst`
// to take over (BlockPool::relistFree) instead of erasing it; the caller must relist it.
std::uint64_t CachingAllocator::Impl::tryMergeBlocks(Block* dst, Block* src, BlockPool& pool,
                                                     std::optional<detail::FreeSet::iterator>* reuse) {
    if (src == nullptr || !src->isAvailable() || dst->mapped != src->mapped) return 0;
    if (dst->prev == src) {
        dst->address = src->address;
        dst->prev = src->prev;
        if (dst->prev != nullptr) {
            dst->prev->next = dst;
        } else {
            dst->segment->head = dst;
        }
    } else {
        dst->next = src->next;
        if (dst->next != nullptr) dst->next->prev = dst;
    }
    const std::uint64_t subsumed = src->size;
    dst->size += subsumed;
    if (src->mapped && reuse != nullptr && !reuse->has_value()) {
        *reuse = src->freePos;
    } else if (src->mapped) {
        pool.eraseFree(src);
    } else {
        pool.unmapped.erase(src);
    }
    deleteBlock(src);
    return subsumed;
}

bool CachingAllocator::Impl::recordStream(std::uint64_t address, StreamId stream) {
    Block* block = active_.find(address);
    if (block == nullptr || !block->allocated) return false;
    if (stream == block->stream) return true;
    if (std::find(block->streamUses.begin(), block->streamUses.end(), stream) == block->streamUses.end()) {
        block->streamUses.push_back(stream);
    }
    return true;
}

bool CachingAllocator::Impl::completePendingFree(std::uint64_t address) {
    Block* block = active_.find(address);
    if (block == nullptr || block->allocated || block->eventCount == 0) return false;
    pending_.erase(std::find(pending_.begin(), pending_.end(), block));
    block->eventCount = 0;
    freeBlock(block);
    return true;
}

void CachingAllocator::Impl::completeAllPending(const detail::PrivatePool* only) {
    // In free() order: PyTorch walks its per-stream event queues, whose order between streams
    // is a hash map's; free() order is the deterministic choice.
    std::vector<Block*> pending;
    pending.swap(pending_);
    for (Block* block : pending) {
        if (only != nullptr && block->pool->owner != only) {
            pending_.push_back(block);  // another pool's event: left for later
            continue;
        }
        block->eventCount = 0;
        freeBlock(block);
    }
}

void CachingAllocator::Impl::synchronize() { completeAllPending(); }

// ---------------------------------------------------------------------------------------------
// CachingAllocator: forwarding

CachingAllocator::CachingAllocator(const AllocatorConfig& config, DeviceMemory& device, EventSink* sink)
    : impl_(std::make_unique<Impl>(config, device, sink)) {}
CachingAllocator::~CachingAllocator() = default;

void CachingAllocator::setOpIndex(std::uint64_t opIndex) { impl_->opIndex_ = opIndex; }
void CachingAllocator::setBestFitTieObserver(BestFitTieObserver observer) { impl_->tieObserver_ = std::move(observer); }
std::optional<std::uint64_t> CachingAllocator::malloc(std::uint64_t size, StreamId stream,
                                                      std::uint32_t stackId) {
    return impl_->malloc(size, stream, stackId);
}
bool CachingAllocator::free(std::uint64_t address) { return impl_->free(address); }
bool CachingAllocator::recordStream(std::uint64_t address, StreamId stream) {
    return impl_->recordStream(address, stream);
}
bool CachingAllocator::completePendingFree(std::uint64_t address) { return impl_->completePendingFree(address); }
void CachingAllocator::synchronize() { impl_->synchronize(); }
void CachingAllocator::emptyCache() { impl_->emptyCache(); }
void CachingAllocator::emptyCache(PoolId pool) { impl_->emptyCache(pool); }
void CachingAllocator::setMemoryFraction(double fraction) { impl_->setMemoryFraction(fraction); }
void CachingAllocator::resetPeakStats() { impl_->stats_.resetPeak(); }
void CachingAllocator::resetAccumulatedStats() { impl_->stats_.resetAccumulated(); }
const DeviceStats& CachingAllocator::stats() const { return impl_->stats_; }
const AllocatorConfig& CachingAllocator::config() const { return impl_->config_; }
DeviceMemory& CachingAllocator::device() const { return impl_->device_; }
const OomInfo& CachingAllocator::lastOom() const { return impl_->lastOom_; }
std::uint64_t CachingAllocator::roundSize(std::uint64_t size) const { return impl_->roundSize(size); }

std::vector<SegmentInfo> CachingAllocator::snapshot() {
    std::vector<SegmentInfo> result = impl_->segments();
    std::uint64_t active = 0;
    for (const SegmentInfo& segment : result) active += segment.activeSize;
    impl_->emit(EventAction::Snapshot, 0, active, active, 0, 0, 0, PoolKind::Large);
    return result;
}
std::vector<SegmentInfo> CachingAllocator::segments() const { return impl_->segments(); }
void CachingAllocator::createPool(PoolId id, PrivatePoolOptions options) { impl_->createPool(id, options); }
void CachingAllocator::beginAllocateToPool(PoolId id, std::optional<StreamId> stream, bool capture) {
    impl_->beginAllocateToPool(id, stream, capture);
}
bool CachingAllocator::endAllocateToPool(PoolId id) { return impl_->endAllocateToPool(id); }
bool CachingAllocator::releasePool(PoolId id) { return impl_->releasePool(id); }
std::string CachingAllocator::memorySummary(int deviceId, bool abbreviated) const {
    return formatMemorySummary(impl_->stats_, deviceId, abbreviated);
}
bool CachingAllocator::isPendingFree(std::uint64_t address) const {
    const Block* block = impl_->active_.find(address);
    return block != nullptr && !block->allocated && block->eventCount > 0;
}
std::string CachingAllocator::debugDump() const { return impl_->debugDump(); }

}  // namespace allocscope::alloc
