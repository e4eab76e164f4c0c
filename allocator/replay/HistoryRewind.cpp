#include "allocator/replay/HistoryRewind.h"

#include <algorithm>
#include <sstream>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/HexAddress.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc {
HistoryRewind::HistoryRewind(const AllocatorConfig& config)
    : config_(config),
      device_(std::make_unique<SimulatedDevice>(0, 0)),
      rounding_(std::make_unique<CachingAllocator>(config, *device_)) {
    // A std::map node of a 32-byte Block (three pointers, a colour, the key) fits an arena slot.
    static_assert(sizeof(Block) == 32);
}

HistoryRewind::~HistoryRewind() = default;

std::uint64_t HistoryRewind::roundSize(std::uint64_t size) const { return rounding_->roundSize(size); }

bool HistoryRewind::load(const std::vector<SegmentInfo>& finalSegments) {
    for (const SegmentInfo& info : finalSegments) {
        const std::uint32_t owner = intern(Owner{info.isExpandable, info.isExpandable ? 0 : info.address, info.stream,
                                                 info.pool, info.poolId, info.stackId});
        std::uint64_t next = info.address;
        for (const BlockInfo& b : info.blocks) {
            if (b.address != next || b.size == 0 || overlaps(b.address, b.size)) {
                problem_ = "the final segments are malformed: the blocks of segment " + hexAddress(info.address) + " do not tile it";
                return false;
            }
            blocks_[b.address] = Block{b.size, b.requestedSize, b.stackId, owner, b.state};
            next += b.size;
        }
        if (next - info.address != info.totalSize || info.totalSize == 0) {
            problem_ = "the final segments are malformed: a segment's blocks do not add up to its size";
            return false;
        }
        if (!info.isExpandable) segments_[info.address] = Segment{info.totalSize, owner};
    }
    return true;
}

std::uint32_t HistoryRewind::intern(const Owner& owner) {
    const auto key = std::make_tuple(owner.expandable, owner.segment, owner.stream, owner.pool, owner.poolId, owner.stackId);
    const auto [it, added] = ownerIndex_.emplace(key, static_cast<std::uint32_t>(owners_.size()));
    if (added) owners_.push_back(owner);
    return it->second;
}

bool HistoryRewind::fail(const RecordedEntry& e, const std::string& why) {
    problem_ = std::string(actionName(e.action)) + " " + hexAddress(e.address) + " (" + std::to_string(e.size) + " B): " + why;
    return false;
}

HistoryRewind::BlockIt HistoryRewind::find(std::uint64_t address) {
    if (const BlockIt* known = recent_.find(address)) return *known;
    const auto it = blocks_.find(address);
    if (it != blocks_.end()) recent_.remember(address, it);
    return it;
}

void HistoryRewind::erase(BlockIt it) {
    recent_.forget(it->first);
    blocks_.erase(it);
}

HistoryRewind::BlockIt HistoryRewind::containing(std::uint64_t address) {
    // A block recently found or made there holds it; otherwise one walk finds whichever does.
    if (const BlockIt* known = recent_.find(address)) return *known;
    auto it = blocks_.upper_bound(address);
    if (it == blocks_.begin()) return blocks_.end();
    --it;
    if (it->first == address) recent_.remember(address, it);
    return address - it->first < it->second.size ? it : blocks_.end();
}

bool HistoryRewind::overlaps(std::uint64_t address, std::uint64_t size) const {
    auto it = blocks_.lower_bound(address);
    if (it != blocks_.end() && it->first < address + size) return true;
    return it != blocks_.begin() && std::prev(it)->first + std::prev(it)->second.size > address;
}

bool HistoryRewind::adjacent(BlockIt a, BlockIt b) const {
    return a->first + a->second.size == b->first && sameOwner(a->second.owner, b->second.owner);
}

HistoryRewind::BlockIt HistoryRewind::carve(BlockIt it, std::uint64_t address, std::uint64_t size) {
    const std::uint64_t start = it->first;
    const std::uint64_t end = start + it->second.size;
    const Block whole = it->second;
    Block piece = whole;
    piece.requested = 0;  // swallowed again by the merge this undoes: never seen
    // No other block starts inside [start, end): the new pieces go right after `it`, so each
    // insert is given its place (no tree walk).
    auto after = std::next(it);
    if (address + size < end) {
        Block tail = piece;
        tail.size = end - (address + size);
        after = blocks_.emplace_hint(after, address + size, tail);
    }
    Block middle = whole;
    middle.size = size;
    if (address > start) {
        it->second = piece;
        it->second.size = address - start;
        const auto made = blocks_.emplace_hint(after, address, middle);
        recent_.remember(address, made);
        return made;
    }
    it->second = middle;  // the middle starts the block: it takes over its node
    return it;
}

bool HistoryRewind::undo(const RecordedEntry& e, StreamId stream) {
    switch (e.action) {
        case EventAction::Alloc: return undoAlloc(e);
        case EventAction::FreeRequested: return undoFreeRequested(e);
        case EventAction::FreeCompleted: return undoFreeCompleted(e);
        case EventAction::SegmentAlloc: return undoSegmentAlloc(e);
        case EventAction::SegmentFree: return undoSegmentFree(e, stream);
        case EventAction::SegmentMap: return undoSegmentMap(e);
        case EventAction::SegmentUnmap: return undoSegmentUnmap(e, stream);
        case EventAction::Oom:
        case EventAction::Snapshot: return true;  // no change to the layout
    }
    return true;
}

bool HistoryRewind::undoAlloc(const RecordedEntry& e) {
    auto it = find(e.address);
    if (it == blocks_.end() || it->second.state != BlockState::ActiveAllocated) return fail(e, "no allocated block there");
    it->second.state = BlockState::Inactive;
    auto next = std::next(it);
    if (next != blocks_.end() && adjacent(it, next) && next->second.state == BlockState::Inactive) {
        // The remainder alloc_found_block split off: the free block it was cut from.
        it->second.size += next->second.size;
        it->second.requested = next->second.requested;
        erase(next);
    }
    return true;
}

bool HistoryRewind::undoFreeRequested(const RecordedEntry& e) {
    auto it = find(e.address);
    if (it == blocks_.end() || it->second.state != BlockState::ActivePendingFree) {
        return fail(e, "no block pending free there");
    }
    it->second.state = BlockState::ActiveAllocated;
    return true;
}

bool HistoryRewind::undoFreeCompleted(const RecordedEntry& e) {
    auto it = containing(e.address);
    if (it == blocks_.end() || it->second.state != BlockState::Inactive) return fail(e, "no free block holds it");
    const std::uint64_t rounded = roundSize(e.size);
    const std::uint64_t end = it->first + it->second.size;
    if (rounded > end - e.address) return fail(e, "the free block there is too small for it");
    std::uint64_t size = rounded;
    const Owner& owner = ownerOf(it->second);
    const bool large = !owner.expandable && owner.pool == PoolKind::Large;
    if (large) {
        // should_split(): a large block keeps a tail of at most 1 MiB (an oversize block any tail
        // within max_split_size's rounding), so a free tail that short was part of it.
        const std::uint64_t tail = end - (e.address + rounded);
        if (tail <= keptTail(rounded)) size += tail;
    }
    it = carve(it, e.address, size);
    it->second.state = BlockState::ActivePendingFree;
    it->second.requested = e.size;
    it->second.stackId = e.stackId;
    if (large) absorbGapBefore(it);
    return true;
}

std::uint64_t HistoryRewind::keptTail(std::uint64_t rounded) const {
    return rounded >= config_.maxSplitSize ? config_.maxNonSplitRounding - 1 : kSmallSize;
}

// A free block of a large (non-expandable) segment is never that short: a split leaves more than
// 1 MiB (should_split), a freed block is larger than 1 MiB, and merges only grow. So a free piece
// of at most the kept tail between a live block and the block `it` now gives back was the live
// block's tail, not split off when it was allocated; the rewind could not tell when it undid
// that block's free, because the memory after it was free then (a trace that starts after the
// model was loaded: its 4 MiB block kept 0.94 MiB, so the 8 MiB block above it started a free
// block of exactly 8 MiB, which tied with another and won by address).
void HistoryRewind::absorbGapBefore(BlockIt it) {
    if (it == blocks_.begin()) return;
    const BlockIt gap = std::prev(it);
    if (gap->second.state != BlockState::Inactive || !adjacent(gap, it) || gap == blocks_.begin()) return;
    const BlockIt owner = std::prev(gap);
    if (owner->second.state == BlockState::Inactive || !adjacent(owner, gap)) return;
    if (owner->second.requested == 0) return;
    const std::uint64_t rounded = roundSize(owner->second.requested);
    if (owner->second.size + gap->second.size - rounded > keptTail(rounded)) return;
    owner->second.size += gap->second.size;
    erase(gap);
}

bool HistoryRewind::undoSegmentAlloc(const RecordedEntry& e) {
    auto seg = segments_.find(e.address);
    auto it = find(e.address);
    if (seg == segments_.end() || seg->second.size != e.size || it == blocks_.end() || it->second.size != e.size ||
        it->second.state != BlockState::Inactive) {
        return fail(e, "no whole free segment there");
    }
    erase(it);
    segments_.erase(seg);
    return true;
}

bool HistoryRewind::undoSegmentFree(const RecordedEntry& e, StreamId stream) {
    if (e.size == 0 || overlaps(e.address, e.size)) return fail(e, "the range is in use");
    // Small-pool segments are exactly 2 MiB; large ones never are (reference §1.6).
    const std::uint32_t owner = intern(Owner{false, e.address, stream, e.size == kSmallBuffer ? PoolKind::Small : PoolKind::Large,
                                             PoolId{}, e.stackId});
    segments_[e.address] = Segment{e.size, owner};
    blocks_[e.address] = Block{e.size, 0, 0, owner, BlockState::Inactive};
    return true;
}

bool HistoryRewind::undoSegmentMap(const RecordedEntry& e) {
    auto it = containing(e.address);
    if (it == blocks_.end() || !ownerOf(it->second).expandable || it->second.state != BlockState::Inactive ||
        e.size == 0 || e.size > it->first + it->second.size - e.address) {
        return fail(e, "no free mapped range holds it");
    }
    erase(carve(it, e.address, e.size));
    return true;
}

std::uint32_t HistoryRewind::expandableOwnerNear(std::uint64_t address, std::uint64_t size, StreamId stream) {
    // A neighbour of the same stream first, then the nearest expandable block of that stream.
    auto next = blocks_.lower_bound(address);
    auto fits = [&](const Block& b) { return ownerOf(b).expandable && ownerOf(b).stream == stream; };
    const bool nextFits = next != blocks_.end() && fits(next->second);
    const bool prevFits = next != blocks_.begin() && fits(std::prev(next)->second);
    if (prevFits && std::prev(next)->first + std::prev(next)->second.size == address) return std::prev(next)->second.owner;
    if (nextFits && next->first == address + size) return next->second.owner;
    for (auto it = next; it != blocks_.begin();) {
        --it;
        if (fits(it->second)) return it->second.owner;
    }
    for (auto it = next; it != blocks_.end(); ++it) {
        if (fits(it->second)) return it->second.owner;
    }
    Owner owner;
    owner.expandable = true;
    owner.stream = stream;
    owner.pool = size % config_.largeSegmentSize == 0 ? PoolKind::Large : PoolKind::Small;
    return intern(owner);
}

bool HistoryRewind::undoSegmentUnmap(const RecordedEntry& e, StreamId stream) {
    if (e.size == 0 || overlaps(e.address, e.size)) return fail(e, "the range is mapped");
    auto it = blocks_.insert_or_assign(e.address, Block{e.size, 0, 0, expandableOwnerNear(e.address, e.size, stream),
                                                        BlockState::Inactive})
                  .first;
    // unmap_block cut the range out of one free block: join what was left on either side.
    auto next = std::next(it);
    if (next != blocks_.end() && adjacent(it, next) && next->second.state == BlockState::Inactive) {
        it->second.size += next->second.size;
        erase(next);
    }
    if (it != blocks_.begin()) {
        auto prev = std::prev(it);
        if (adjacent(prev, it) && prev->second.state == BlockState::Inactive) {
            prev->second.size += it->second.size;
            prev->second.requested = 0;
            erase(it);
        }
    }
    return true;
}

std::vector<SegmentInfo> HistoryRewind::segments() const {
    std::vector<SegmentInfo> out;
    auto add = [](SegmentInfo& info, std::uint64_t address, const Block& b) {
        info.blocks.push_back(BlockInfo{address, b.size, b.requested, b.state, b.state == BlockState::Inactive ? 0 : b.stackId});
        info.totalSize += b.size;
        if (b.state == BlockState::ActiveAllocated) info.allocatedSize += b.size;
        if (b.state != BlockState::Inactive) {
            info.activeSize += b.size;
            info.requestedSize += b.requested;
        }
    };
    auto start = [](std::uint64_t address, const Owner& owner) {
        SegmentInfo info;
        info.address = address;
        info.stream = owner.stream;
        info.pool = owner.pool;
        info.poolId = owner.poolId;
        info.isExpandable = owner.expandable;
        info.stackId = owner.stackId;
        return info;
    };
    const Block* previous = nullptr;
    std::uint64_t previousEnd = 0;
    for (const auto& [address, block] : blocks_) {
        // A new SegmentInfo per segment, and per contiguous run of an expandable reservation.
        const Owner& owner = ownerOf(block);
        const bool continues = previous != nullptr && previousEnd == address && sameOwner(previous->owner, block.owner);
        if (!continues) out.push_back(start(owner.expandable ? address : owner.segment, owner));
        add(out.back(), address, block);
        previous = &block;
        previousEnd = address + block.size;
    }
    return out;
}

std::uint64_t HistoryRewind::liveBlocks() const {
    return static_cast<std::uint64_t>(std::count_if(blocks_.begin(), blocks_.end(), [](const auto& entry) {
        return entry.second.state != BlockState::Inactive;
    }));
}

std::uint64_t HistoryRewind::liveBytes() const {
    std::uint64_t bytes = 0;
    for (const auto& [address, block] : blocks_) {
        if (block.state != BlockState::Inactive) bytes += block.size;
    }
    return bytes;
}

}  // namespace allocscope::alloc
