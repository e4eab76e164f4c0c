#pragma once
// address -> Block* for every allocated or pending-free block (PyTorch's allocated_blocks map):
// an open-addressing table (U64Map), no per-insert allocation, one or two cache lines per lookup.
#include <cstdint>

#include "allocator/core/detail/U64Map.h"

namespace allocscope::alloc::detail {

struct Block;

class AddressMap {
public:
    // The block at `address`, or null.
    Block* find(std::uint64_t address) const {
        Block* const* block = map_.find(address);
        return block != nullptr ? *block : nullptr;
    }
    void insert(std::uint64_t address, Block* block) { map_.set(address, block); }  // inserts or overwrites
    bool erase(std::uint64_t address) { return map_.erase(address); }
    std::size_t size() const { return map_.size(); }
    template <class F>
    void forEach(F&& f) const {
        map_.forEach(f);
    }

private:
    U64Map<Block*> map_;
};

}  // namespace allocscope::alloc::detail
