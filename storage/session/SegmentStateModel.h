#pragma once
// The allocator's segment layout and statistics rebuilt from its event stream alone: what
// "state at event N" is made of. Applying an event does what PyTorch's allocator did when it
// emitted that event (reference §3.3, §3.4, §5, §6, §7, §8.2, §18.1): alloc carves a block at
// its address (splitting off the remainder), free_requested makes it pending, free_completed
// makes it inactive and merges it with free neighbours of the same mapped state, segment
// events add and remove segments (or mapped pages of an expandable reservation), and the
// statistics follow PyTorch's update rules, the net inactive_split update included. Events of
// restored state (cause "restored", CachingAllocator::restoreSegments) rebuild a state PyTorch
// had: their allocs may sit anywhere in a free block. (No event carries the stale requested size
// of a restored free block: it reads 0 until the block is used again.)
//
// Counters that no event reveals (num_alloc_retries, num_sync_all_streams, peak and
// accumulated resets) come from stats fixups: the recorder stores the allocator's own stats
// whenever they diverge from what the events imply, and replays call setStats().
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/RecentByAddress.h"
#include "allocator/core/SegmentInfo.h"

namespace allocscope::storage {

struct ModelBlock {
    std::uint64_t size = 0;
    std::uint64_t requested = 0;
    std::uint64_t segment = 0;   // segment address, or the expandable reservation's base
    std::uint64_t stream = 0;
    std::uint64_t allocSeq = 0;  // 1 + seq of the alloc event that carved it (0 = never carved)
    std::uint32_t stackId = 0;
    alloc::BlockState state = alloc::BlockState::Inactive;
    bool expandable = false;
    alloc::PoolKind pool = alloc::PoolKind::Large;
    bool operator==(const ModelBlock&) const = default;
};

struct ModelSegment {
    std::uint64_t size = 0;  // 0 for an expandable reservation (its mapped ranges are the segments)
    std::uint64_t stream = 0;
    std::uint32_t stackId = 0;
    alloc::PoolKind pool = alloc::PoolKind::Large;
    bool expandable = false;
    alloc::PoolId poolId;  // segment_pool_id, from the segment event that created it
    bool operator==(const ModelSegment&) const = default;
};

class SegmentStateModel {
public:
    // What one applied event changed, so that it can be undone (stepping back one event).
    struct Journal {
        std::uint64_t appliedBefore = 0;
        alloc::DeviceStats statsBefore;
        std::vector<std::pair<std::uint64_t, std::optional<ModelBlock>>> blocks;
        std::vector<std::pair<std::uint64_t, std::optional<ModelSegment>>> segments;
        std::vector<std::pair<std::uint64_t, std::optional<std::uint64_t>>> gaps;
    };

    SegmentStateModel() = default;
    explicit SegmentStateModel(const alloc::DeviceStats& initial) { setStats(initial); }

    // Applies one event. Returns false (and changes nothing it cannot) if the event does not
    // fit the layout: a damaged or foreign stream never crashes a query.
    bool apply(const alloc::Event& event, Journal* journal = nullptr);
    void undo(const Journal& journal);

    const alloc::DeviceStats& stats() const { return stats_; }
    void setStats(const alloc::DeviceStats& stats);
    std::uint64_t applied() const { return applied_; }  // events applied so far = next seq
    void setApplied(std::uint64_t applied) { applied_ = applied; }
    std::uint64_t anomalies() const { return anomalies_; }

    // The layout as CachingAllocator::segments() reports it: sorted by address, one segment per
    // contiguous mapped range of an expandable reservation.
    std::vector<alloc::SegmentInfo> segments() const;
    const std::map<std::uint64_t, ModelBlock>& blocks() const { return blocks_; }
    const std::map<std::uint64_t, ModelSegment>& segmentTable() const { return segments_; }
    std::size_t liveBlocks() const { return live_; }
    std::size_t segmentCount() const;

    // Keyframe (de)serialisation lives in StateCodec; it fills these directly.
    std::map<std::uint64_t, ModelBlock>& mutableBlocks() {
        recent_.clear();  // the caller may erase any block
        return blocks_;
    }
    std::map<std::uint64_t, ModelSegment>& mutableSegments() { return segments_; }
    const std::map<std::uint64_t, std::uint64_t>& gaps() const { return gaps_; }
    std::map<std::uint64_t, std::uint64_t>& mutableGaps() { return gaps_; }
    void recount();

private:
    using BlockIt = std::map<std::uint64_t, ModelBlock>::iterator;
    // The block that starts at `address` (blocks_.end() if none).
    BlockIt find(std::uint64_t address);
    bool hasPrev(BlockIt it) const;
    bool hasNext(BlockIt it) const;
    void touchBlock(std::uint64_t address);
    void touchSegment(std::uint64_t address);
    void touchGap(std::uint64_t address);
    void setGap(std::uint64_t address, std::uint64_t requested);
    BlockIt putBlock(std::uint64_t address, const ModelBlock& block);
    // The same where the caller knows the place: `hint` is the block at `address`, or the one
    // that will follow it (std::map's hinted insert: no tree walk).
    BlockIt putBlock(BlockIt hint, std::uint64_t address, const ModelBlock& block);
    // A new value for the block `it` (its address unchanged): no search, and the node stays.
    void assignBlock(BlockIt it, const ModelBlock& block);
    void eraseBlock(BlockIt it);
    bool oversize(std::uint64_t size) const { return size >= maxSplit_; }

    BlockIt splitForRestored(std::uint64_t address);
    bool carve(const alloc::Event& e);
    bool freeRequested(const alloc::Event& e);
    bool freeCompleted(const alloc::Event& e);
    bool segmentAlloc(const alloc::Event& e);
    bool segmentFree(const alloc::Event& e);
    bool segmentMap(const alloc::Event& e);
    bool segmentUnmap(const alloc::Event& e);

    std::map<std::uint64_t, ModelBlock> blocks_;
    // Blocks recently put, by address: an allocation's free_requested and free_completed find
    // the block its alloc carved (and an alloc often the remainder a recent one left). Every
    // erase forgets the erased block; mutableBlocks() and undo() clear it.
    alloc::RecentByAddress<BlockIt> recent_;
    std::map<std::uint64_t, ModelSegment> segments_;
    // Unmapped ranges of expandable reservations, by start: the stale requested size that the
    // allocator's unmapped block object carries into the next mapping (absent = 0).
    std::map<std::uint64_t, std::uint64_t> gaps_;
    alloc::DeviceStats stats_;
    std::uint64_t maxSplit_ = UINT64_MAX;
    std::uint64_t applied_ = 0;
    std::uint64_t anomalies_ = 0;
    std::size_t live_ = 0;  // allocated + pending-free blocks
    Journal* journal_ = nullptr;
};

}  // namespace allocscope::storage
