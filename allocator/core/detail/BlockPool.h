#pragma once
// PyTorch's BlockPool: the free set ordered by (stream, size, address), the unmapped ranges of
// expandable segments ordered by (stream, address), and the pool's GC age clock.
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/detail/Block.h"
#include "allocator/core/detail/FreeSet.h"
#include "allocator/core/detail/NodeArena.h"

namespace allocscope::alloc::detail {

struct AddressKey {
    StreamId stream;
    std::uint64_t address;
};

struct ByAddress {
    using is_transparent = void;
    static bool less(StreamId sa, std::uint64_t aa, StreamId sb, std::uint64_t ab) {
        return sa != sb ? sa < sb : aa < ab;
    }
    bool operator()(const Block* a, const Block* b) const {
        return less(a->stream, a->address, b->stream, b->address);
    }
    bool operator()(const Block* a, const AddressKey& b) const {
        return less(a->stream, a->address, b.stream, b.address);
    }
    bool operator()(const AddressKey& a, const Block* b) const {
        return less(a.stream, a.address, b->stream, b->address);
    }
};

using UnmappedSet = std::set<Block*, ByAddress, ArenaAllocator<Block*>>;

struct PrivatePool;

struct BlockPool {
    BlockPool(NodeArena* arena, bool small, PrivatePool* ownerPool = nullptr)
        : blocks(BySize{}, ArenaAllocator<FreeEntry>(arena)),
          unmapped(ByAddress{}, ArenaAllocator<Block*>(arena)),
          isSmall(small),
          kind(small ? PoolKind::Small : PoolKind::Large),
          statType(small ? kSmallPool : kLargePool),
          owner(ownerPool) {}

    void insertFree(Block* block) {
        block->gcCountBase = getFreeBlocksCallCount;
        block->freePos = blocks.emplace(block).first;
    }
    // The block must be in this pool's free set (freePos is valid only then).
    void eraseFree(Block* block) { blocks.erase(block->freePos); }
    // `block` (free) takes over `entry`: its own entry, whose key went stale when the block was
    // resized (a split's remainder), or the entry of a neighbour it absorbed (free_block). The
    // set ends as if that entry had been erased and `block` inserted: the same elements in the
    // same order, so every later search decides the same. The new key moved one way from the
    // entry's old one; when it has not passed the neighbour on that side, the entry is updated
    // in place (no erase, no insert); otherwise its node moves.
    void relistFree(Block* block, FreeSet::iterator entry) {
        const FreeEntry updated(block);
        const BySize less;
        bool inPlace = false;
        if (less(updated, *entry)) {
            inPlace = entry == blocks.begin() || less(*std::prev(entry), updated);
        } else {
            const auto after = std::next(entry);
            inPlace = after == blocks.end() || less(updated, *after);
        }
        if (inPlace) {
            entry->assignInPlace(updated);
        } else {
            auto node = blocks.extract(entry);
            node.value() = updated;
            entry = blocks.insert(std::move(node)).position;
        }
        block->freePos = entry;
        block->gcCountBase = getFreeBlocksCallCount;
    }

    FreeSet blocks;         // free, mapped blocks
    UnmappedSet unmapped;   // unmapped ranges of expandable segments
    std::uint64_t getFreeBlocksCallCount = 0;  // GC age clock (only ticks when GC is on)
    bool isSmall;
    PoolKind kind;
    StatType statType;
    PrivatePool* owner;  // the private pool this BlockPool belongs to; null for the default pools
};

}  // namespace allocscope::alloc::detail
