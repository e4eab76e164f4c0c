#pragma once
// PyTorch's BlockPool: the free set ordered by (stream, size, address), the unmapped ranges of
// expandable segments ordered by (stream, address), and the pool's GC age clock.
#include <cstdint>
#include <set>

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

    FreeSet blocks;         // free, mapped blocks
    UnmappedSet unmapped;   // unmapped ranges of expandable segments
    std::uint64_t getFreeBlocksCallCount = 0;  // GC age clock (only ticks when GC is on)
    bool isSmall;
    PoolKind kind;
    StatType statType;
    PrivatePool* owner;  // the private pool this BlockPool belongs to; null for the default pools
};

}  // namespace allocscope::alloc::detail
