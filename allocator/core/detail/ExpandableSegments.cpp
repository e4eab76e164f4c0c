// CachingAllocator::Impl: expandable segments (§6). One virtual reservation of 9/8 of device
// memory per (stream, pool), created when no unmapped range of that stream fits; pages of 2 MiB
// (small pool) or large_segment_size (large pool) are mapped for the rounded request and
// unmapped again when whole free pages are released.
#include <algorithm>

#include "allocator/core/ReservationSize.h"
#include "allocator/core/detail/AllocatorImpl.h"

namespace allocscope::alloc {

using detail::Block;
using detail::BlockPool;
using detail::Segment;

// find_expandable_block(): the lowest-address run of free + unmapped space on this stream
// that adds up to `size`, else a new reservation.
Block* CachingAllocator::Impl::findExpandableBlock(BlockPool& pool, StreamId stream, std::uint64_t size,
                                                   std::uint32_t stackId) {
    auto hasSpace = [size](const Block* b) {
        std::uint64_t bytes = 0;
        while (bytes < size && b != nullptr && b->isAvailable()) {
            bytes += b->size;
            b = b->next;
        }
        return bytes >= size;
    };
    for (auto it = pool.unmapped.lower_bound(detail::AddressKey{stream, 0});
         it != pool.unmapped.end() && (*it)->stream == stream; ++it) {
        Block* candidate = *it;
        if (candidate->prev != nullptr && candidate->prev->isAvailable()) candidate = candidate->prev;
        if (hasSpace(candidate)) return candidate;
    }
    const std::uint64_t pageSize = pool.isSmall ? kSmallBuffer : config_.largeSegmentSize;
    const std::uint64_t reservationSize = ReservationSize::of(device_.totalMemory(), pageSize);
    const std::optional<std::uint64_t> base = device_.reserveAddressRange(reservationSize, pageSize, stream);
    if (!base) return nullptr;
    if (pool.owner != nullptr) ++pool.owner->segments;
    Segment* segment = newSegment();
    segment->address = *base;
    segment->size = reservationSize;
    segment->stream = stream;
    segment->pool = &pool;
    segment->pageSize = pageSize;
    segment->stackId = stackId;
    segment->expandable = true;
    Block* candidate = newBlock();
    candidate->address = *base;
    candidate->size = reservationSize;
    candidate->stream = stream;
    candidate->segment = segment;
    candidate->pool = &pool;
    candidate->mapped = false;
    segment->head = candidate;
    pool.unmapped.insert(candidate);
    return candidate;
}

// map_block(): map the pages covering [toMap.address, +size); the mapped part leaves the
// unmapped set, merges with free mapped neighbours and joins the free set.
bool CachingAllocator::Impl::mapBlock(Block* toMap, std::uint64_t size) {
    Segment& segment = *toMap->segment;
    const std::uint64_t page = segment.pageSize;
    const std::uint64_t offset = toMap->address - segment.address;
    const std::uint64_t begin = offset / page;
    const std::uint64_t end = (offset + size + page - 1) / page;
    if (begin == end) return false;  // PyTorch: an empty range maps nothing and fails
    const std::uint64_t mappedSize = (end - begin) * page;
    if (!device_.mapPages(segment.address + begin * page, mappedSize)) return false;
    BlockPool& pool = *toMap->pool;
    pool.unmapped.erase(toMap);
    toMap->mapped = true;
    if (mappedSize < toMap->size) {
        Block* remaining = newBlock();
        remaining->address = toMap->address + mappedSize;
        remaining->size = toMap->size - mappedSize;
        remaining->stream = toMap->stream;
        remaining->segment = toMap->segment;
        remaining->pool = &pool;
        remaining->mapped = false;
        remaining->prev = toMap;
        remaining->next = toMap->next;
        if (remaining->next != nullptr) remaining->next->prev = remaining;
        toMap->next = remaining;
        pool.unmapped.insert(remaining);
        toMap->size = mappedSize;
    }
    tryMergeBlocks(toMap, toMap->prev, pool);
    tryMergeBlocks(toMap, toMap->next, pool);
    pool.insertFree(toMap);
    totalAllocatedMemory_ += mappedSize;
    segment.mappedBytes += mappedSize;
    increase(stats_.reserved_bytes, pool.statType, static_cast<std::int64_t>(mappedSize));
    stats_.num_device_alloc += 1;
    emit(EventAction::SegmentMap, segment.address + begin * page, mappedSize, mappedSize, toMap->stream,
         segment.address, segment.stackId, pool.kind, poolIdOf(pool));
    return true;
}

// try_allocate_expandable_block(): map whole pages of the rounded request (not alloc_size).
Block* CachingAllocator::Impl::tryAllocateExpandableBlock(BlockPool& pool, StreamId stream, std::uint64_t size,
                                                          std::uint32_t stackId) {
    Block* candidate = findExpandableBlock(pool, stream, size, stackId);
    if (candidate == nullptr) return nullptr;
    if (!candidate->mapped && !mapBlock(candidate, std::min(candidate->size, size))) return nullptr;
    while (candidate->size < size) {
        // invariant: free -> unmapped -> ...; mapping the next range merges the free block in.
        const std::uint64_t remaining = size - candidate->size;
        Block* next = candidate->next;
        if (next == nullptr || next->mapped) return nullptr;  // the reservation is too small
        if (!mapBlock(next, std::min(remaining, next->size))) return nullptr;
        candidate = next;
    }
    return candidate;  // listed in the free set (mapBlock put it there), as allocFoundBlock expects
}

// unmap_block(): unmap the whole pages strictly inside a free block; partial pages at either
// end stay mapped as separate free blocks.
void CachingAllocator::Impl::unmapBlock(Block* block) {
    Segment& segment = *block->segment;
    const std::uint64_t page = segment.pageSize;
    const std::uint64_t startOffset = block->address - segment.address;
    const std::uint64_t begin = (startOffset + page - 1) / page;
    const std::uint64_t end = (startOffset + block->size) / page;
    if (begin >= end) return;
    const std::uint64_t unmappedAddress = segment.address + begin * page;
    const std::uint64_t unmappedSize = (end - begin) * page;
    BlockPool& pool = *block->pool;
    pool.eraseFree(block);
    device_.unmapPages(unmappedAddress, unmappedSize);
    const std::uint64_t beforeSize = unmappedAddress - block->address;
    if (beforeSize > 0) {
        Block* before = newBlock();
        before->address = block->address;
        before->size = beforeSize;
        before->stream = block->stream;
        before->segment = block->segment;
        before->pool = &pool;
        before->prev = block->prev;
        before->next = block;
        if (before->prev != nullptr) {
            before->prev->next = before;
        } else {
            segment.head = before;
        }
        block->prev = before;
        pool.insertFree(before);
    }
    const std::uint64_t afterSize = block->size - (beforeSize + unmappedSize);
    if (afterSize > 0) {
        Block* after = newBlock();
        after->address = unmappedAddress + unmappedSize;
        after->size = afterSize;
        after->stream = block->stream;
        after->segment = block->segment;
        after->pool = &pool;
        after->prev = block;
        after->next = block->next;
        if (after->next != nullptr) after->next->prev = after;
        block->next = after;
        pool.insertFree(after);
    }
    block->address = unmappedAddress;
    block->size = unmappedSize;
    block->mapped = false;
    tryMergeBlocks(block, block->prev, pool);
    tryMergeBlocks(block, block->next, pool);
    pool.unmapped.insert(block);
    totalAllocatedMemory_ -= unmappedSize;
    segment.mappedBytes -= unmappedSize;
    decrease(stats_.reserved_bytes, pool.statType, static_cast<std::int64_t>(unmappedSize));
    stats_.num_device_free += 1;
    emit(EventAction::SegmentUnmap, unmappedAddress, unmappedSize, unmappedSize, block->stream, segment.address,
         segment.stackId, pool.kind, poolIdOf(pool));
}

// release_expandable_segment(): the reservation is one unmapped block again: give it back.
void CachingAllocator::Impl::releaseExpandableSegment(Block* block) {
    Segment* segment = block->segment;
    block->pool->unmapped.erase(block);
    if (block->pool->owner != nullptr) --block->pool->owner->segments;
    device_.releaseAddressRange(segment->address, segment->size);
    deleteSegment(segment);
    deleteBlock(block);
}

}  // namespace allocscope::alloc
