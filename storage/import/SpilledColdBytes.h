#pragma once
// The pickle memo's store for the streaming import (formats::ColdBytes, PickleMemo, issue #18):
// the frozen memo chunks of a big snapshot go to a temporary file instead of staying in memory.
//
// It is an alloc::SpillArray<uint8_t>, which already is a spillable append-only array: an unnamed
// file mapped at one address (nothing is ever left behind, a full disk is a std::runtime_error),
// the writer's pages released behind it, and forget() to release what readers touched. The memo
// spills sooner than the trace's arrays (4 MiB, not spillFromBytes()'s 32 MiB): its bytes are
// read at random and rarely, and 4 MiB is the memo of a ~200 MB snapshot, so any file big enough
// for its memo to matter keeps none of it in memory. A test's smaller spillFromBytes() still wins.
#include <cstddef>
#include <cstdint>

#include "allocator/core/SpillArray.h"
#include "storage/formats/ColdBytes.h"

namespace allocscope::storage {

class SpilledColdBytes final : public formats::ColdBytes {
public:
    std::uint64_t append(const std::uint8_t* bytes, std::size_t n) override;
    const std::uint8_t* data() const override { return bytes_.data(); }
    std::uint64_t size() const override { return bytes_.size(); }
    // Every page read since the last trim leaves the resident set (the file keeps them).
    void trim() override { bytes_.forget(0, bytes_.size()); }
    std::size_t heapBytes() const override { return bytes_.spilled() ? 0 : bytes_.capacity(); }
    // Whether the bytes are in the temporary file (false: in memory, below the threshold or where
    // no temporary file can be made).
    bool spilled() const { return bytes_.spilled(); }

    static constexpr std::size_t kSpillFromBytes = std::size_t{4} << 20;

private:
    alloc::SpillArray<std::uint8_t> bytes_;
};

}  // namespace allocscope::storage
