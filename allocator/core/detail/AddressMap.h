#pragma once
// address -> Block* for every allocated or pending-free block (PyTorch's allocated_blocks map).
// Open addressing with linear probing and backward-shift deletion: no per-insert allocation,
// one or two cache lines per lookup. Address 0 marks an empty slot (never a block address).
#include <cstdint>
#include <vector>

namespace allocscope::alloc::detail {

struct Block;

class AddressMap {
public:
    AddressMap() { rehash(6); }

    Block* find(std::uint64_t key) const {
        if (key == 0) return nullptr;
        for (std::size_t i = home(key);; i = (i + 1) & mask_) {
            const Slot& slot = slots_[i];
            if (slot.key == key) return slot.value;
            if (slot.key == 0) return nullptr;
        }
    }
    // Inserts or overwrites.
    void insert(std::uint64_t key, Block* value) {
        if ((size_ + 1) * 2 > slots_.size()) rehash(bits_ + 1);
        for (std::size_t i = home(key);; i = (i + 1) & mask_) {
            Slot& slot = slots_[i];
            if (slot.key == key) {
                slot.value = value;
                return;
            }
            if (slot.key == 0) {
                slot = {key, value};
                ++size_;
                return;
            }
        }
    }
    bool erase(std::uint64_t key) {
        if (key == 0) return false;
        std::size_t i = home(key);
        while (slots_[i].key != key) {
            if (slots_[i].key == 0) return false;
            i = (i + 1) & mask_;
        }
        // Backward shift: pull later entries of the probe run into the hole.
        std::size_t hole = i;
        for (std::size_t j = (hole + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
            const std::size_t want = home(slots_[j].key);
            // Move j into the hole unless its home lies cyclically in (hole, j].
            const bool homeBetween = hole <= j ? (want > hole && want <= j) : (want > hole || want <= j);
            if (!homeBetween) {
                slots_[hole] = slots_[j];
                hole = j;
            }
        }
        slots_[hole] = {0, nullptr};
        --size_;
        return true;
    }
    std::size_t size() const { return size_; }
    template <class F>
    void forEach(F&& f) const {
        for (const Slot& slot : slots_) {
            if (slot.key != 0) f(slot.key, slot.value);
        }
    }

private:
    struct Slot {
        std::uint64_t key = 0;
        Block* value = nullptr;
    };
    std::size_t home(std::uint64_t key) const {
        // Fibonacci hashing: block addresses are multiples of 512, so mix all bits.
        return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - bits_));
    }
    void rehash(unsigned bits) {
        std::vector<Slot> old;
        old.swap(slots_);
        bits_ = bits;
        slots_.assign(std::size_t{1} << bits, Slot{});
        mask_ = slots_.size() - 1;
        size_ = 0;
        for (const Slot& slot : old) {
            if (slot.key != 0) insert(slot.key, slot.value);
        }
    }

    std::vector<Slot> slots_;
    std::size_t mask_ = 0;
    std::size_t size_ = 0;
    unsigned bits_ = 0;
};

}  // namespace allocscope::alloc::detail
