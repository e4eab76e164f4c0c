#pragma once
// A small table of recently met blocks by start address, in front of a std::map of blocks: the
// history rewind (HistoryRewind) and a recording's segment-state model (storage's
// SegmentStateModel) keep blocks in a map by address and look most of them up by address.
//
// Why: a block's alloc, free_requested and free_completed come a few events apart (backwards in
// the rewind), so most lookups ask for a block met just before, and a walk down a map of
// thousands of blocks on every event of a big import cost more than the rest of the lookup.
//
// A slot holds a map iterator, which stays valid until its node is erased: the owner forgets a
// block's address before it erases the block, and clears the table before any erase it does not
// see. A copy starts empty, since its slots would name the other map's nodes.
#include <array>
#include <cstddef>
#include <cstdint>

namespace allocscope::alloc {

template <class Iterator>
class RecentByAddress {
public:
    RecentByAddress() = default;
    RecentByAddress(const RecentByAddress&) {}
    RecentByAddress& operator=(const RecentByAddress&) {
        clear();
        return *this;
    }

    // The block remembered at `address`, or null.
    const Iterator* find(std::uint64_t address) const {
        const Slot& slot = table_[slotOf(address)];
        return slot.address == address ? &slot.it : nullptr;
    }
    void remember(std::uint64_t address, Iterator it) { table_[slotOf(address)] = Slot{address, it}; }
    void forget(std::uint64_t address) {
        Slot& slot = table_[slotOf(address)];
        if (slot.address == address) slot.address = kNone;
    }
    void clear() {
        for (Slot& slot : table_) slot.address = kNone;
    }

private:
    static constexpr unsigned kBits = 8;
    static constexpr std::uint64_t kNone = ~std::uint64_t{0};
    struct Slot {
        std::uint64_t address = kNone;
        Iterator it{};
    };
    static std::size_t slotOf(std::uint64_t address) {
        // Blocks start on 512-byte boundaries; a multiplicative hash spreads neighbours apart.
        return static_cast<std::size_t>(((address >> 9) * 0x9E3779B97F4A7C15ull) >> (64 - kBits));
    }
    std::array<Slot, std::size_t{1} << kBits> table_{};
};

}  // namespace allocscope::alloc
