#pragma once
// The allocator's segments and blocks walked *backwards* through recorded trace entries: it starts
// from a snapshot's final `segments` and undoes one entry at a time, newest first, until it holds
// the state before the oldest entry (HistoryWindow decides what that means for a replay).
//
// Undoing follows what PyTorch did going forwards (reference §3.3, §3.4, §6):
//   alloc          -> the block is free again; it merges with the free block after it, which was
//                     the remainder alloc_found_block split off (the remainder keeps the old free
//                     block's stale requested size, so the merged block gets the remainder's);
//   free_completed -> the free block that holds the address gives back the block, pending; its
//                     size is round_size(requested size), plus a tail that PyTorch would not have
//                     split off (large pool: at most 1 MiB);
//   free_requested -> the pending block is allocated again;
//   segment_alloc / segment_map -> the whole free segment / the free mapped range disappears;
//   segment_free / segment_unmap -> a whole free segment / free mapped range appears.
// Stale requested sizes of free blocks that a later merge swallows are never seen again; they
// are 0 here. Those an unmapped range carries into its next mapping are not kept (the snapshot
// has no unmapped ranges to put them in).
//
// Each undo returns false, with problem() set, when the entry does not fit the state: the trace
// and its final segments do not belong together, or the block size guess above was wrong.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/RecentByAddress.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/core/detail/NodeArena.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

class CachingAllocator;
class SimulatedDevice;

class HistoryRewind {
public:
    // round_size() needs the recorded config; false (problem() set) if the segments are malformed.
    explicit HistoryRewind(const AllocatorConfig& config);
    ~HistoryRewind();
    HistoryRewind(const HistoryRewind&) = delete;
    HistoryRewind& operator=(const HistoryRewind&) = delete;
    bool load(const std::vector<SegmentInfo>& finalSegments);

    // `stream`: the entry's (RecordedTrace::stream()).
    bool undo(const RecordedEntry& entry, StreamId stream);
    const std::string& problem() const { return problem_; }

    // The state now, as a snapshot lists it (sorted by address, one SegmentInfo per contiguous
    // mapped range of an expandable segment).
    std::vector<SegmentInfo> segments() const;
    std::uint64_t liveBlocks() const;  // allocated and pending-free
    std::uint64_t liveBytes() const;
    bool empty() const { return blocks_.empty(); }

private:
    // What a block belongs to: its segment (non-expandable), or the stream and pool of its
    // reservation (expandable: the snapshot does not name reservations).
    struct Owner {
        bool expandable = false;
        std::uint64_t segment = 0;
        StreamId stream = 0;
        PoolKind pool = PoolKind::Large;
        PoolId poolId;
        std::uint32_t stackId = 0;  // the segment's creation stack (not part of the identity)
        bool same(const Owner& o) const {
            return expandable == o.expandable && segment == o.segment && stream == o.stream && pool == o.pool &&
                   poolId == o.poolId;
        }
    };
    // Blocks name their owner by index (owners_): a block is 32 bytes and its map node fits the
    // node arena, because the rewind splits and merges blocks on every entry of a big trace.
    struct Block {
        std::uint64_t size = 0;
        std::uint64_t requested = 0;
        std::uint32_t stackId = 0;
        std::uint32_t owner = 0;  // owners_[owner]
        BlockState state = BlockState::Inactive;
    };
    struct Segment {
        std::uint64_t size = 0;
        std::uint32_t owner = 0;
    };
    using BlockMap = std::map<std::uint64_t, Block, std::less<std::uint64_t>,
                              detail::ArenaAllocator<std::pair<const std::uint64_t, Block>>>;
    using SegmentMap = std::map<std::uint64_t, Segment, std::less<std::uint64_t>,
                                detail::ArenaAllocator<std::pair<const std::uint64_t, Segment>>>;
    using BlockIt = BlockMap::iterator;

    // The index of `owner` in owners_, added the first time it is seen (stack included).
    std::uint32_t intern(const Owner& owner);

    // The block that starts at `address` (blocks_.end() if none), through recent_ first.
    BlockIt find(std::uint64_t address);
    // Every erase of a block goes through here, so that recent_ never names an erased node.
    void erase(BlockIt it);
    const Owner& ownerOf(const Block& block) const { return owners_[block.owner]; }
    bool sameOwner(std::uint32_t a, std::uint32_t b) const { return a == b || owners_[a].same(owners_[b]); }

    bool fail(const RecordedEntry& entry, const std::string& why);
    BlockIt containing(std::uint64_t address);
    bool overlaps(std::uint64_t address, std::uint64_t size) const;
    bool adjacent(BlockIt a, BlockIt b) const;
    std::uint64_t roundSize(std::uint64_t size) const;
    // Cuts [address, address + size) out of the free block `it`: the pieces either side stay free.
    BlockIt carve(BlockIt it, std::uint64_t address, std::uint64_t size);
    // The owner (owners_ index) of an unmapped range coming back: a neighbour's reservation first.
    std::uint32_t expandableOwnerNear(std::uint64_t address, std::uint64_t size, StreamId stream);

    // The most a large block keeps unsplit past its rounded size (should_split).
    std::uint64_t keptTail(std::uint64_t rounded) const;
    // A free piece too short to be a block of its own, before `it`: the live block before it.
    void absorbGapBefore(BlockIt it);
    bool undoAlloc(const RecordedEntry& e);
    bool undoFreeRequested(const RecordedEntry& e);
    bool undoFreeCompleted(const RecordedEntry& e);
    bool undoSegmentAlloc(const RecordedEntry& e);
    bool undoSegmentFree(const RecordedEntry& e, StreamId stream);
    bool undoSegmentMap(const RecordedEntry& e);
    bool undoSegmentUnmap(const RecordedEntry& e, StreamId stream);

    AllocatorConfig config_;
    std::unique_ptr<SimulatedDevice> device_;
    std::unique_ptr<CachingAllocator> rounding_;  // its round_size(), nothing else
    std::vector<Owner> owners_;
    std::map<std::tuple<bool, std::uint64_t, StreamId, PoolKind, PoolId, std::uint32_t>, std::uint32_t> ownerIndex_;
    detail::NodeArena arena_;                                             // the maps' nodes (declared first)
    BlockMap blocks_{BlockMap::allocator_type(&arena_)};                  // every mapped block, by address
    SegmentMap segments_{SegmentMap::allocator_type(&arena_)};            // non-expandable segments, by address
    RecentByAddress<BlockIt> recent_;  // blocks recently found or made, by start address
    std::string problem_;
};

}  // namespace allocscope::alloc
