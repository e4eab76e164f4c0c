#pragma once
// A map from 64-bit keys (addresses, tensor ids) to small values: the allocator's address map
// (AddressMap) and the replay's bookkeeping (which tensor a recorded address holds, where the
// replay put each tensor). A std::map there cost a node allocation, a free and a rebalance per
// alloc and free, on every one of a big trace's millions of steps. Open addressing with linear
// probing and backward-shift deletion: no allocation but the table's growth, one or two cache
// lines per lookup. No order (forEach visits in table order). The key ~0 is reserved: an empty slot.
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace allocscope::alloc::detail {

template <typename Value>
class U64Map {
public:
    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};

    U64Map() { rehash(4); }

    // The value under `key`, or null.
    Value* find(std::uint64_t key) {
        if (key == kEmpty) return nullptr;
        for (std::size_t i = home(key);; i = (i + 1) & mask_) {
            Slot& slot = slots_[i];
            if (slot.key == key) return &slot.value;
            if (slot.key == kEmpty) return nullptr;
        }
    }
    const Value* find(std::uint64_t key) const { return const_cast<U64Map*>(this)->find(key); }
    // The value under `key`, which must be there (the replay's own bookkeeping guarantees it).
    const Value& at(std::uint64_t key) const {
        const Value* value = find(key);
        if (value == nullptr) throw std::logic_error("U64Map::at: no such key");
        return *value;
    }
    // Inserts or overwrites.
    void set(std::uint64_t key, const Value& value) {
        if (key == kEmpty) throw std::logic_error("U64Map: the key ~0 is reserved");
        if ((size_ + 1) * 2 > slots_.size()) rehash(bits_ + 1);
        for (std::size_t i = home(key);; i = (i + 1) & mask_) {
            Slot& slot = slots_[i];
            if (slot.key == key) {
                slot.value = value;
                return;
            }
            if (slot.key == kEmpty) {
                slot = {key, value};
                ++size_;
                return;
            }
        }
    }
    bool erase(std::uint64_t key) {
        if (key == kEmpty) return false;
        std::size_t i = home(key);
        while (slots_[i].key != key) {
            if (slots_[i].key == kEmpty) return false;
            i = (i + 1) & mask_;
        }
        // Backward shift: pull later entries of the probe run into the hole.
        std::size_t hole = i;
        for (std::size_t j = (hole + 1) & mask_; slots_[j].key != kEmpty; j = (j + 1) & mask_) {
            const std::size_t want = home(slots_[j].key);
            // Move j into the hole unless its home lies cyclically in (hole, j].
            const bool homeBetween = hole <= j ? (want > hole && want <= j) : (want > hole || want <= j);
            if (!homeBetween) {
                slots_[hole] = slots_[j];
                hole = j;
            }
        }
        slots_[hole] = Slot{};
        --size_;
        return true;
    }
    std::size_t size() const { return size_; }
    template <class F>
    void forEach(F&& f) const {
        for (const Slot& slot : slots_) {
            if (slot.key != kEmpty) f(slot.key, slot.value);
        }
    }

private:
    struct Slot {
        std::uint64_t key = kEmpty;
        Value value{};
    };
    std::size_t home(std::uint64_t key) const {
        // Fibonacci hashing: addresses are multiples of 512 and ids are dense, so mix all bits.
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
            if (slot.key != kEmpty) set(slot.key, slot.value);
        }
    }

    std::vector<Slot> slots_;
    std::size_t mask_ = 0;
    std::size_t size_ = 0;
    unsigned bits_ = 0;
};

}  // namespace allocscope::alloc::detail
