// CachingAllocator::restoreSegments: a state PyTorch had, rebuilt from its snapshot's segments,
// for a history that starts mid-run (a ring buffer that overflowed, a state-only snapshot). The
// blocks are built as allocFoundBlock / freeBlock / ExpandableSegments.cpp leave them, and the
// statistics' `current` values are what PyTorch's counters hold in that state; the cumulative
// ones (allocated / freed, num_*) stay 0: nothing before the restored state is known.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include "allocator/core/HexAddress.h"
#include "allocator/core/RestorePlan.h"
#include "allocator/core/detail/AllocatorImpl.h"

namespace allocscope::alloc {

using detail::Block;
using detail::BlockPool;
using detail::Segment;

namespace {

// The blocks must tile the segment exactly, as every snapshot PyTorch writes does.
void checkTiling(const SegmentInfo& info) {
    std::uint64_t next = info.address;
    for (const BlockInfo& block : info.blocks) {
        if (block.address != next || block.size == 0) {
            throw std::invalid_argument("restoreSegments: the blocks of segment " + hexAddress(info.address) +
                                        " do not tile it (block at " + hexAddress(block.address) + ")");
        }
        next += block.size;
    }
    if (next - info.address != info.totalSize || info.totalSize == 0) {
        throw std::invalid_argument("restoreSegments: the blocks of segment " + hexAddress(info.address) +
                                    " do not add up to its size");
    }
}

class Restorer {
public:
    explicit Restorer(CachingAllocator::Impl& impl) : impl_(impl) {}

    void restore(const std::vector<SegmentInfo>& segments) {
        for (const SegmentInfo& info : segments) checkTiling(info);
        CauseScope cause(impl_, EventCause::Restored);
        for (const RestoredSpace& space : planRestore(segments, impl_.config_, impl_.device_.totalMemory())) {
            if (space.expandable) {
                restoreReservation(space, segments);
            } else {
                restoreSegment(segments[space.ranges.front()]);
            }
        }
        emitLive();
        // Peaks start at the restored values: what came before is not known.
        impl_.stats_.resetPeak();
    }

private:
    BlockPool& poolOf(const SegmentInfo& info) {
        return impl_.blockPoolFor(info.poolId, info.pool == PoolKind::Small);
    }

    void add(StatArray& array, std::size_t poolType, std::uint64_t amount) {
        array[kAggregate].current += static_cast<std::int64_t>(amount);
        array[poolType].current += static_cast<std::int64_t>(amount);
    }

    // One block after `prev` (or the segment's head), in the state the snapshot gives it.
    Block* addBlock(Segment* segment, Block* prev, std::uint64_t address, std::uint64_t size) {
        Block* block = impl_.newBlock();
        block->address = address;
        block->size = size;
        block->stream = segment->stream;
        block->segment = segment;
        block->pool = segment->pool;
        block->prev = prev;
        if (prev != nullptr) {
            prev->next = block;
        } else {
            segment->head = block;
        }
        return block;
    }

    void setState(Block* block, const BlockInfo& info) {
        BlockPool& pool = *block->pool;
        const std::size_t st = pool.statType;
        block->requestedSize = info.requestedSize;
        block->stackId = info.stackId;
        DeviceStats& stats = impl_.stats_;
        if (info.state == BlockState::Inactive) {
            pool.insertFree(block);
            return;  // inactive_split is counted once the segment is linked (it needs neighbours)
        }
        // Allocated, or freed and waiting for one event (the replay completes it where the
        // recording shows free_completed, or a synchronising call does).
        block->allocated = info.state == BlockState::ActiveAllocated;
        block->eventCount = block->allocated ? 0 : 1;
        impl_.active_.insert(block->address, block);
        add(stats.active, st, 1);
        add(stats.active_bytes, st, block->size);
        add(stats.requested_bytes, st, block->requestedSize);
        if (block->allocated) {
            add(stats.allocation, st, 1);
            add(stats.allocated_bytes, st, block->size);
            if (block->size >= impl_.config_.maxSplitSize) stats.oversize_allocations.current += 1;
        }
        live_.push_back(block);
    }

    // A cudaMalloc'd segment: segment_alloc at the snapshot's address.
    void restoreSegment(const SegmentInfo& info) {
        BlockPool& pool = poolOf(info);
        const std::optional<std::uint64_t> address = impl_.device_.allocateSegment(info.totalSize, info.stream);
        if (address != info.address) {
            throw std::runtime_error("restoreSegments: the device placed segment " + hexAddress(info.address) + " at " +
                                     (address ? hexAddress(*address) : std::string("nothing (out of memory)")) +
                                     "; restoring needs a device that places segments where the snapshot says");
        }
        Segment* segment = impl_.newSegment();
        segment->address = info.address;
        segment->size = info.totalSize;
        segment->stream = info.stream;
        segment->pool = &pool;
        segment->stackId = info.stackId;
        if (pool.owner != nullptr) ++pool.owner->segments;
        impl_.totalAllocatedMemory_ += info.totalSize;
        Block* prev = nullptr;
        for (const BlockInfo& b : info.blocks) {
            prev = addBlock(segment, prev, b.address, b.size);
            setState(prev, b);
        }
        // inactive_split: free blocks of a split (non-expandable) segment.
        for (Block* block = segment->head; block != nullptr; block = block->next) {
            if (block->isAvailable() && block->isSplit()) {
                add(impl_.stats_.inactive_split, pool.statType, 1);
                add(impl_.stats_.inactive_split_bytes, pool.statType, block->size);
            }
        }
        DeviceStats& stats = impl_.stats_;
        add(stats.segment, pool.statType, 1);
        add(stats.reserved_bytes, pool.statType, info.totalSize);
        if (info.totalSize >= impl_.config_.maxSplitSize) stats.oversize_segments.current += 1;
        impl_.emit(EventAction::SegmentAlloc, info.address, info.totalSize, info.totalSize, info.stream, info.address,
                   info.stackId, pool.kind, CachingAllocator::Impl::poolIdOf(pool));
    }

    // An expandable reservation: its mapped ranges (segment_map each), the pages between and
    // after them unmapped, as findExpandableBlock / mapBlock / unmapBlock leave them.
    void restoreReservation(const RestoredSpace& space, const std::vector<SegmentInfo>& segments) {
        const SegmentInfo& first = segments[space.ranges.front()];
        BlockPool& pool = poolOf(first);
        DeviceMemory& device = impl_.device_;
        const std::optional<std::uint64_t> base = device.reserveAddressRange(space.size, space.pageSize, first.stream);
        if (base != space.address) {
            throw std::runtime_error("restoreSegments: the device placed the reservation of " + hexAddress(space.address) +
                                     " elsewhere; restoring needs a device that places it where the snapshot says");
        }
        Segment* segment = impl_.newSegment();
        segment->address = space.address;
        segment->size = space.size;
        segment->stream = first.stream;
        segment->pool = &pool;
        segment->pageSize = space.pageSize;
        segment->stackId = first.stackId;
        segment->expandable = true;
        if (pool.owner != nullptr) ++pool.owner->segments;
        Block* prev = nullptr;
        std::uint64_t cursor = space.address;
        auto unmapped = [&](std::uint64_t end) {
            if (end <= cursor) return;
            prev = addBlock(segment, prev, cursor, end - cursor);
            prev->mapped = false;
            pool.unmapped.insert(prev);
        };
        for (const std::size_t index : space.ranges) {
            const SegmentInfo& range = segments[index];
            if ((range.address - space.address) % space.pageSize != 0 || range.totalSize % space.pageSize != 0) {
                throw std::invalid_argument("restoreSegments: expandable range " + hexAddress(range.address) +
                                            " is not made of whole pages");
            }
            unmapped(range.address);
            if (!device.mapPages(range.address, range.totalSize)) {
                throw std::runtime_error("restoreSegments: the device cannot map the " +
                                         std::to_string(range.totalSize) + " bytes at " + hexAddress(range.address));
            }
            for (const BlockInfo& b : range.blocks) {
                prev = addBlock(segment, prev, b.address, b.size);
                setState(prev, b);
            }
            cursor = range.address + range.totalSize;
            segment->mappedBytes += range.totalSize;
            impl_.totalAllocatedMemory_ += range.totalSize;
            add(impl_.stats_.reserved_bytes, pool.statType, range.totalSize);
            impl_.emit(EventAction::SegmentMap, range.address, range.totalSize, range.totalSize, range.stream,
                       space.address, segment->stackId, pool.kind, CachingAllocator::Impl::poolIdOf(pool));
        }
        unmapped(space.address + space.size);
    }

    // alloc for every live block, then free_requested for the pending ones, in address order: an
    // event consumer that applies them to the segments above ends in the same state.
    void emitLive() {
        std::sort(live_.begin(), live_.end(), [](const Block* a, const Block* b) { return a->address < b->address; });
        for (const Block* block : live_) {
            impl_.emit(EventAction::Alloc, block->address, block->requestedSize, block->size, block->stream,
                       block->segment->address, block->stackId, block->pool->kind);
        }
        for (Block* block : live_) {
            if (block->allocated) continue;
            impl_.pending_.push_back(block);
            impl_.emit(EventAction::FreeRequested, block->address, block->requestedSize, block->size, block->stream,
                       block->segment->address, block->stackId, block->pool->kind);
        }
    }

    CachingAllocator::Impl& impl_;
    std::vector<Block*> live_;  // allocated and pending-free blocks
};

}  // namespace

void CachingAllocator::restoreSegments(const std::vector<SegmentInfo>& segments) {
    if (!impl_->segments_.empty()) throw std::logic_error("restoreSegments: the allocator already has segments");
    Restorer(*impl_).restore(segments);
}

}  // namespace allocscope::alloc
