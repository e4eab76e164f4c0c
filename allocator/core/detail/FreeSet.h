#pragma once
// The free set of a BlockPool: free blocks ordered by (stream, size, address), PyTorch's
// BlockComparatorSize. Its own header so that a Block can hold its position in the set
// (Block::freePos): taking a block out of the set then needs no search. The members that read
// a Block are defined in Block.h, where Block is complete.
#include <cstdint>
#include <set>

#include "allocator/core/Event.h"
#include "allocator/core/detail/NodeArena.h"

namespace allocscope::alloc::detail {

struct Block;

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
// without dereferencing Blocks: the free set is the hottest structure of the allocator. A Block's
// size and address may change while it is listed (a split's remainder): the entry keeps the old
// key until BlockPool::relistFree brings it up to date.
//
// The fields are mutable so that relistFree can give an entry its new key (or another block) in
// place when that key still sorts between the entry's neighbours: the set's order is unchanged,
// and an erase and an insert (a tree walk and two rebalances) are saved. Nothing else writes them.
struct FreeEntry {
    mutable StreamId stream;
    mutable SizeAddress key;
    mutable Block* block;
    mutable bool expandable;

    explicit FreeEntry(Block* b);
    // Takes `other`'s fields; only for an entry whose place in the set `other` keeps.
    void assignInPlace(const FreeEntry& other) const {
        stream = other.stream;
        key = other.key;
        block = other.block;
        expandable = other.expandable;
    }
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
    bool operator()(const FreeEntry& a, const Block* b) const;
    bool operator()(const Block* a, const FreeEntry& b) const;
};

using FreeSet = std::set<FreeEntry, BySize, ArenaAllocator<FreeEntry>>;

}  // namespace allocscope::alloc::detail
