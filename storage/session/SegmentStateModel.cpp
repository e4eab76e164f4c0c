#include "storage/session/SegmentStateModel.h"

#include <algorithm>

namespace allocscope::storage {
namespace {

using alloc::BlockState;
using alloc::EventAction;

std::size_t poolIndex(alloc::PoolKind pool) { return pool == alloc::PoolKind::Small ? alloc::kSmallPool : alloc::kLargePool; }

// PyTorch updates "all" and the pool's own entry together (reference §8.1).
void increase(alloc::StatArray& stat, alloc::PoolKind pool, std::int64_t amount) {
    stat[alloc::kAggregate].increase(amount);
    stat[poolIndex(pool)].increase(amount);
}
void decrease(alloc::StatArray& stat, alloc::PoolKind pool, std::int64_t amount) {
    stat[alloc::kAggregate].decrease(amount);
    stat[poolIndex(pool)].decrease(amount);
}
// One net update (reference §18.1): an increase when positive, a decrease when negative.
void netUpdate(alloc::StatArray& stat, alloc::PoolKind pool, std::int64_t net) {
    if (net > 0) increase(stat, pool, net);
    if (net < 0) decrease(stat, pool, -net);
}
std::int64_t s64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

}  // namespace

void SegmentStateModel::setStats(const alloc::DeviceStats& stats) {
    stats_ = stats;
    maxSplit_ = stats.max_split_size < 0 ? UINT64_MAX : static_cast<std::uint64_t>(stats.max_split_size);
}

void SegmentStateModel::recount() {
    live_ = 0;
    for (const auto& [address, block] : blocks_) {
        if (block.state != BlockState::Inactive) ++live_;
    }
    maxSplit_ = stats_.max_split_size < 0 ? UINT64_MAX : static_cast<std::uint64_t>(stats_.max_split_size);
}

std::size_t SegmentStateModel::segmentCount() const { return segments().size(); }

bool SegmentStateModel::hasPrev(BlockIt it) const {
    if (it == blocks_.begin()) return false;
    const auto prev = std::prev(it);
    return prev->first + prev->second.size == it->first && prev->second.segment == it->second.segment;
}

bool SegmentStateModel::hasNext(BlockIt it) const {
    const auto next = std::next(it);
    return next != blocks_.end() && it->first + it->second.size == next->first && next->second.segment == it->second.segment;
}

void SegmentStateModel::touchBlock(std::uint64_t address) {
    if (journal_ == nullptr) return;
    for (const auto& entry : journal_->blocks) {
        if (entry.first == address) return;
    }
    const auto it = blocks_.find(address);
    journal_->blocks.emplace_back(address, it == blocks_.end() ? std::nullopt : std::optional<ModelBlock>(it->second));
}

void SegmentStateModel::touchSegment(std::uint64_t address) {
    if (journal_ == nullptr) return;
    for (const auto& entry : journal_->segments) {
        if (entry.first == address) return;
    }
    const auto it = segments_.find(address);
    journal_->segments.emplace_back(address, it == segments_.end() ? std::nullopt : std::optional<ModelSegment>(it->second));
}

void SegmentStateModel::touchGap(std::uint64_t address) {
    if (journal_ == nullptr) return;
    for (const auto& entry : journal_->gaps) {
        if (entry.first == address) return;
    }
    const auto it = gaps_.find(address);
    journal_->gaps.emplace_back(address, it == gaps_.end() ? std::nullopt : std::optional<std::uint64_t>(it->second));
}

void SegmentStateModel::setGap(std::uint64_t address, std::uint64_t requested) {
    touchGap(address);
    if (requested == 0) gaps_.erase(address);
    else gaps_[address] = requested;
}

SegmentStateModel::BlockIt SegmentStateModel::find(std::uint64_t address) {
    if (const BlockIt* known = recent_.find(address)) return *known;
    const auto it = blocks_.find(address);
    if (it != blocks_.end()) recent_.remember(address, it);
    return it;
}

SegmentStateModel::BlockIt SegmentStateModel::putBlock(std::uint64_t address, const ModelBlock& block) {
    touchBlock(address);
    auto [it, inserted] = blocks_.insert_or_assign(address, block);
    (void)inserted;
    recent_.remember(address, it);
    return it;
}

SegmentStateModel::BlockIt SegmentStateModel::putBlock(BlockIt hint, std::uint64_t address, const ModelBlock& block) {
    touchBlock(address);
    const auto it = blocks_.insert_or_assign(hint, address, block);
    recent_.remember(address, it);
    return it;
}

void SegmentStateModel::assignBlock(BlockIt it, const ModelBlock& block) {
    touchBlock(it->first);
    it->second = block;
}

void SegmentStateModel::eraseBlock(BlockIt it) {
    touchBlock(it->first);
    recent_.forget(it->first);
    blocks_.erase(it);
}

bool SegmentStateModel::apply(const alloc::Event& e, Journal* journal) {
    journal_ = journal;
    if (journal_ != nullptr) {
        journal_->appliedBefore = applied_;
        journal_->statsBefore = stats_;
        journal_->blocks.clear();
        journal_->segments.clear();
        journal_->gaps.clear();
    }
    bool ok = true;
    switch (e.action) {
        case EventAction::Alloc: ok = carve(e); break;
        case EventAction::FreeRequested: ok = freeRequested(e); break;
        case EventAction::FreeCompleted: ok = freeCompleted(e); break;
        case EventAction::SegmentAlloc: ok = segmentAlloc(e); break;
        case EventAction::SegmentFree: ok = segmentFree(e); break;
        case EventAction::SegmentMap: ok = segmentMap(e); break;
        case EventAction::SegmentUnmap: ok = segmentUnmap(e); break;
        case EventAction::Oom: ++stats_.num_ooms; break;
        case EventAction::Snapshot: break;
    }
    if (!ok) ++anomalies_;
    applied_ = e.seq + 1;
    journal_ = nullptr;
    return ok;
}

void SegmentStateModel::undo(const Journal& journal) {
    recent_.clear();  // blocks are erased below without eraseBlock()
    for (const auto& [address, before] : journal.blocks) {
        const auto it = blocks_.find(address);
        if (it != blocks_.end() && it->second.state != BlockState::Inactive) --live_;
        if (before) {
            blocks_.insert_or_assign(address, *before);
            if (before->state != BlockState::Inactive) ++live_;
        } else if (it != blocks_.end()) {
            blocks_.erase(it);
        }
    }
    for (const auto& [address, before] : journal.segments) {
        if (before) segments_.insert_or_assign(address, *before);
        else segments_.erase(address);
    }
    for (const auto& [address, before] : journal.gaps) {
        if (before) gaps_.insert_or_assign(address, *before);
        else gaps_.erase(address);
    }
    stats_ = journal.statsBefore;
    applied_ = journal.appliedBefore;
}

// A restored block (cause "restored": the state a recorded history started in) may sit anywhere
// in a free block of its segment: the free block is cut in two at its address first, both halves
// inactive split blocks, so that the carve below finds the state PyTorch had.
SegmentStateModel::BlockIt SegmentStateModel::splitForRestored(std::uint64_t address) {
    auto it = blocks_.upper_bound(address);
    if (it == blocks_.begin()) return blocks_.end();
    --it;
    if (it->second.state != BlockState::Inactive || address - it->first >= it->second.size) return blocks_.end();
    const ModelBlock found = it->second;
    const bool wasSplit = hasPrev(it) || hasNext(it);
    ModelBlock left = found;
    left.size = address - it->first;
    ModelBlock right = found;
    right.size = found.size - left.size;
    putBlock(it->first, left);
    if (!found.expandable) {
        increase(stats_.inactive_split, found.pool, wasSplit ? 1 : 2);
        if (!wasSplit) increase(stats_.inactive_split_bytes, found.pool, s64(found.size));
    }
    return putBlock(address, right);
}

// alloc_found_block (reference §3.3): the allocation takes the low part of the free block that
// starts at its address; the rest stays a free block with the old block's stale fields.
bool SegmentStateModel::carve(const alloc::Event& e) {
    auto it = find(e.address);
    if (it == blocks_.end() && e.cause == alloc::EventCause::Restored) it = splitForRestored(e.address);
    if (it == blocks_.end() || it->second.state != BlockState::Inactive || it->second.size < e.roundedSize ||
        e.roundedSize == 0) {
        return false;
    }
    const ModelBlock found = it->second;
    const bool wasSplit = hasPrev(it) || hasNext(it);
    const std::uint64_t remaining = found.size - e.roundedSize;
    // The remainder goes right after the block, which keeps its node (hinted: no tree walk).
    if (remaining > 0) {
        ModelBlock rest = found;
        rest.size = remaining;
        putBlock(std::next(it), e.address + e.roundedSize, rest);
    }
    ModelBlock block = found;
    block.size = e.roundedSize;
    block.requested = e.size;
    block.stackId = e.stackId;
    block.state = BlockState::ActiveAllocated;
    block.allocSeq = e.seq + 1;
    assignBlock(it, block);
    ++live_;
    const alloc::PoolKind pool = found.pool;
    if (!found.expandable) {
        if (remaining > 0) {
            if (wasSplit) {
                decrease(stats_.inactive_split_bytes, pool, s64(e.roundedSize));
            } else {
                increase(stats_.inactive_split, pool, 1);
                increase(stats_.inactive_split_bytes, pool, s64(remaining));
            }
        } else if (wasSplit) {
            decrease(stats_.inactive_split, pool, 1);
            decrease(stats_.inactive_split_bytes, pool, s64(found.size));
        }
    }
    increase(stats_.allocation, pool, 1);
    increase(stats_.allocated_bytes, pool, s64(e.roundedSize));
    increase(stats_.active, pool, 1);
    increase(stats_.active_bytes, pool, s64(e.roundedSize));
    increase(stats_.requested_bytes, pool, s64(e.size));
    if (oversize(e.roundedSize)) stats_.oversize_allocations.increase(1);
    return true;
}

bool SegmentStateModel::freeRequested(const alloc::Event& e) {
    auto it = find(e.address);
    if (it == blocks_.end() || it->second.state != BlockState::ActiveAllocated) return false;
    touchBlock(e.address);
    it->second.state = BlockState::ActivePendingFree;
    const ModelBlock& block = it->second;
    decrease(stats_.allocation, block.pool, 1);
    decrease(stats_.allocated_bytes, block.pool, s64(block.size));
    if (oversize(block.size)) stats_.oversize_allocations.decrease(1);
    return true;
}

// free_block + try_merge_blocks (reference §3.4, §18.1): merge with inactive neighbours of the
// same segment (for expandable ones: adjacent mapped blocks), one net inactive_split update.
bool SegmentStateModel::freeCompleted(const alloc::Event& e) {
    auto it = find(e.address);
    if (it == blocks_.end() || it->second.state == BlockState::Inactive) return false;
    if (it->second.state == BlockState::ActiveAllocated) {
        // A free_completed without its free_requested: do the immediate part too.
        alloc::Event requested = e;
        requested.action = EventAction::FreeRequested;
        freeRequested(requested);
        it = find(e.address);
        ++anomalies_;
    }
    ModelBlock block = it->second;
    const std::uint64_t originalSize = block.size;
    std::int64_t netCount = 0;
    std::int64_t netBytes = 0;
    const bool mergePrev = hasPrev(it) && std::prev(it)->second.state == BlockState::Inactive;
    const bool mergeNext = hasNext(it) && std::next(it)->second.state == BlockState::Inactive;
    if (mergeNext) {
        auto next = std::next(it);
        block.size += next->second.size;
        --netCount;
        netBytes -= s64(next->second.size);
        eraseBlock(next);
    }
    if (mergePrev) {
        auto prev = std::prev(it);
        block.size += prev->second.size;
        --netCount;
        netBytes -= s64(prev->second.size);
        eraseBlock(it);
        it = prev;  // the merged block takes over the previous block's node
    }
    block.state = BlockState::Inactive;
    assignBlock(it, block);
    --live_;
    if (!block.expandable) {
        if (hasPrev(it) || hasNext(it)) {
            ++netCount;
            netBytes += s64(block.size);
        }
        netUpdate(stats_.inactive_split, block.pool, netCount);
        netUpdate(stats_.inactive_split_bytes, block.pool, netBytes);
    }
    decrease(stats_.active, block.pool, 1);
    decrease(stats_.active_bytes, block.pool, s64(originalSize));
    decrease(stats_.requested_bytes, block.pool, s64(block.requested));
    return true;
}

bool SegmentStateModel::segmentAlloc(const alloc::Event& e) {
    if (e.size == 0 || segments_.count(e.address) != 0 || blocks_.count(e.address) != 0) return false;
    touchSegment(e.address);
    segments_[e.address] = ModelSegment{e.size, e.stream, e.stackId, e.pool, false, e.poolId};
    ModelBlock block;
    block.size = e.size;
    block.segment = e.address;
    block.stream = e.stream;
    block.pool = e.pool;
    putBlock(e.address, block);
    increase(stats_.segment, e.pool, 1);
    increase(stats_.reserved_bytes, e.pool, s64(e.size));
    if (oversize(e.size)) stats_.oversize_segments.increase(1);
    ++stats_.num_device_alloc;
    return true;
}

bool SegmentStateModel::segmentFree(const alloc::Event& e) {
    const auto seg = segments_.find(e.address);
    if (seg == segments_.end() || seg->second.expandable) return false;
    const ModelSegment segment = seg->second;
    // Normally one whole free block; drop whatever blocks the segment still has.
    for (auto it = blocks_.lower_bound(e.address); it != blocks_.end() && it->first < e.address + segment.size;) {
        if (it->second.state != BlockState::Inactive) --live_;
        auto next = std::next(it);
        eraseBlock(it);
        it = next;
    }
    touchSegment(e.address);
    segments_.erase(e.address);
    decrease(stats_.segment, segment.pool, 1);
    decrease(stats_.reserved_bytes, segment.pool, s64(segment.size));
    if (oversize(segment.size)) stats_.oversize_segments.decrease(1);
    ++stats_.num_device_free;
    return true;
}

// map_block (reference §6.2): the unmapped range starting at the address becomes one free
// mapped block (keeping the stale requested size of the allocator's unmapped block object) that
// absorbs the free mapped blocks around it. reserved_bytes grows; segment counts do not.
bool SegmentStateModel::segmentMap(const alloc::Event& e) {
    const std::uint64_t base = e.segment;
    auto res = segments_.find(base);
    if (res == segments_.end()) {
        touchSegment(base);
        res = segments_.emplace(base, ModelSegment{0, e.stream, e.stackId, e.pool, true, e.poolId}).first;
    } else if (!res->second.expandable) {
        return false;
    }
    if (blocks_.count(e.address) != 0) return false;
    ModelBlock block;
    block.size = e.size;
    block.segment = base;
    block.stream = res->second.stream;
    block.pool = res->second.pool;
    block.expandable = true;
    const auto gap = gaps_.find(e.address);
    if (gap != gaps_.end()) {
        block.requested = gap->second;
        setGap(e.address, 0);
    }
    std::uint64_t start = e.address;
    auto it = putBlock(e.address, block);
    if (hasNext(it) && std::next(it)->second.state == BlockState::Inactive) {
        block.size += std::next(it)->second.size;
        eraseBlock(std::next(it));
    }
    if (hasPrev(it) && std::prev(it)->second.state == BlockState::Inactive) {
        auto prev = std::prev(it);
        start = prev->first;
        block.size += prev->second.size;
        eraseBlock(it);
    }
    putBlock(start, block);
    increase(stats_.reserved_bytes, block.pool, s64(e.size));
    ++stats_.num_device_alloc;
    return true;
}

// unmap_block (reference §6.3): the unmapped pages leave the middle of a free block; what
// remains on either side becomes new free mapped blocks. The unmapped range merges with the
// unmapped ranges next to it, and a reservation left without mapped pages is released.
bool SegmentStateModel::segmentUnmap(const alloc::Event& e) {
    auto it = blocks_.upper_bound(e.address);
    if (it == blocks_.begin()) return false;
    --it;
    const std::uint64_t start = it->first;
    const ModelBlock found = it->second;
    if (!found.expandable || found.state != BlockState::Inactive || e.address + e.size > start + found.size) return false;
    const std::uint64_t base = found.segment;
    const std::uint64_t end = start + found.size;
    const std::uint64_t unmapEnd = e.address + e.size;
    eraseBlock(it);
    ModelBlock piece;
    piece.segment = base;
    piece.stream = found.stream;
    piece.pool = found.pool;
    piece.expandable = true;
    if (e.address > start) {
        piece.size = e.address - start;
        putBlock(start, piece);
    }
    if (unmapEnd < end) {
        piece.size = end - unmapEnd;
        putBlock(unmapEnd, piece);
    }
    // The gap this range joins: the one before it (if no mapped block ends at its start) and
    // the one after it (if no mapped block starts at its end).
    std::uint64_t gapStart = e.address;
    if (e.address == start) {
        auto after = blocks_.lower_bound(e.address);
        std::uint64_t prevEnd = base;
        bool prevMapped = false;
        if (after != blocks_.begin()) {
            auto prev = std::prev(after);
            if (prev->second.segment == base) {
                prevEnd = prev->first + prev->second.size;
                prevMapped = prevEnd == e.address;
            }
        }
        if (!prevMapped && prevEnd < e.address) {
            gapStart = prevEnd;
            setGap(prevEnd, 0);
        }
    }
    if (unmapEnd == end) setGap(unmapEnd, 0);
    setGap(gapStart, found.requested);
    decrease(stats_.reserved_bytes, found.pool, s64(e.size));
    ++stats_.num_device_free;
    // release_blocks destroys a reservation that is one unmapped block again (reference §6.3).
    auto first = blocks_.lower_bound(base);
    if (first == blocks_.end() || first->second.segment != base) {
        auto next = segments_.upper_bound(base);
        const std::uint64_t limit = next == segments_.end() ? UINT64_MAX : next->first;
        for (auto g = gaps_.lower_bound(base); g != gaps_.end() && g->first < limit;) {
            const std::uint64_t key = g->first;
            ++g;
            setGap(key, 0);
        }
        touchSegment(base);
        segments_.erase(base);
    }
    return true;
}

std::vector<alloc::SegmentInfo> SegmentStateModel::segments() const {
    std::vector<alloc::SegmentInfo> out;
    auto addBlock = [](alloc::SegmentInfo& seg, std::uint64_t address, const ModelBlock& b) {
        alloc::BlockInfo info;
        info.address = address;
        info.size = b.size;
        info.requestedSize = b.requested;
        info.state = b.state;
        info.stackId = b.state != BlockState::Inactive ? b.stackId : 0;
        if (b.state == BlockState::ActiveAllocated) seg.allocatedSize += b.size;
        if (b.state != BlockState::Inactive) {
            seg.activeSize += b.size;
            seg.requestedSize += b.requested;
        }
        seg.blocks.push_back(info);
    };
    for (const auto& [address, meta] : segments_) {
        auto it = blocks_.lower_bound(address);
        if (!meta.expandable) {
            alloc::SegmentInfo seg;
            seg.address = address;
            seg.totalSize = meta.size;
            seg.stream = meta.stream;
            seg.pool = meta.pool;
            seg.poolId = meta.poolId;
            seg.stackId = meta.stackId;
            for (; it != blocks_.end() && it->second.segment == address && it->first < address + meta.size; ++it) {
                addBlock(seg, it->first, it->second);
            }
            out.push_back(std::move(seg));
            continue;
        }
        // Expandable: one segment per contiguous run of mapped blocks.
        std::optional<alloc::SegmentInfo> current;
        for (; it != blocks_.end() && it->second.segment == address; ++it) {
            if (!current || current->address + current->totalSize != it->first) {
                if (current) out.push_back(std::move(*current));
                current.emplace();
                current->address = it->first;
                current->stream = meta.stream;
                current->pool = meta.pool;
                current->poolId = meta.poolId;
                current->isExpandable = true;
                current->stackId = meta.stackId;
            }
            current->totalSize += it->second.size;
            addBlock(*current, it->first, it->second);
        }
        if (current) out.push_back(std::move(*current));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
    return out;
}

}  // namespace allocscope::storage
