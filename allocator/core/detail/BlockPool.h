#pragma once
// PyTorch's BlockPool: the free set ordered by (stream, size, address), the unmapped ranges of
// expandable segments ordered by (stream, address), and the pool's GC age clock.
#include <cstdint>
#include <set>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/detail/Block.h"
#include "allocator/core/detail/NodeArena.h"

namespace allocscope::alloc::detail {

struct SizeKey {
    StreamId stream;
    std::uint64_t size;
    std::uint64_t address;
};

// (size, address) as one 128-bit number: the tree compares it without branching on two fields.
__extension__ using SizeAddress = unsigned __int128;
inline SizeAddress sizeAddress(std::uint64_t size, std::uint64_t address) {
    return (static_cast<SizeAddress>(size) << 64) | address;
}

// A free-set element carries its sort key (and the expandable flag) inline, so searches compare
// without dereferencing Blocks: the free set is the hottest structure of the allocator. The
// key fields never change while a block is in the set (blocks are taken out before resizing).
struct FreeEntry {
    StreamId stream;
    SizeAddress key;
    Block* block;
    bool expandable;

    explicit FreeEntry(Block* b)
        : stream(b->stream), key(sizeAddress(b->size, b->address)), block(b), expandable(b->segment->expandable) {}
    std::uint64_t size() const { return static_cast<std::uint64_t>(key >> 64); }
    std::uint64_t address() const { return static_cast<std::uint64_t>(key); }
    Block* operator->() const { return block; }
    operator Block*() const { return block; }  // NOLINT: a free-set element is its block
};

struct BySize {
    using is_transparent = void;
    static bool less(StreamId sa, SizeAddress ka, StreamId sb, SizeAddress kb) {
        return sa != sb ? sa < sb : ka < kb;
    }
    bool operator()(const FreeEntry& a, const FreeEntry& b) const { return less(a.stream, a.key, b.stream, b.key); }
    bool operator()(const FreeEntry& a, const SizeKey& b) const {
        return less(a.stream, a.key, b.stream, sizeAddress(b.size, b.address));
    }
    bool operator()(const SizeKey& a, const FreeEntry& b) const {
        return less(a.stream, sizeAddress(a.size, a.address), b.stream, b.key);
    }
    bool operator()(const FreeEntry& a, const Block* b) const {
        return less(a.stream, a.key, b->stream, sizeAddress(b->size, b->address));
    }
    bool operator()(const Block* a, const FreeEntry& b) const {
        return less(a->stream, sizeAddress(a->size, a->address), b.stream, b.key);
    }
};

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

using FreeSet = std::set<FreeEntry, BySize, ArenaAllocator<FreeEntry>>;
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
        blocks.emplace(block);
    }
    void eraseFree(Block* block) { blocks.erase(blocks.find(block)); }

    FreeSet blocks;         // free, mapped blocks
    UnmappedSet unmapped;   // unmapped ranges of expandable segments
    std::uint64_t getFreeBlocksCallCount = 0;  // GC age clock (only ticks when GC is on)
    bool isSmall;
    PoolKind kind;
    StatType statType;
    PrivatePool* owner;  // the private pool this BlockPool belongs to; null for the default pools
};

}  // namespace allocscope::alloc::detail
