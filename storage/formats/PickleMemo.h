#pragma once
// The pickle memo of PickleReader (and of its fast path for trace entries, EntryBatchDecoder).
//
// Python's memo is a dict keyed by any 32-bit index; PyTorch's JIT pickler uses dense BINPUT
// indices and CPython uses MEMOIZE (index = current memo size). Dense indices live in chunks of
// slots; a hostile sparse index (LONG_BINPUT 0xffffffff) goes to a map instead of making us
// allocate four billion slots.
//
// Old chunks are frozen (issue #18): a big snapshot's memo has two slots per trace entry (its dict
// and its frames list), over a hundred million for 5 GB, but once a streamed read has converted
// the entries of a chunk its slots hold only a few distinct values (the dropped-entry marker and
// the strings and frame lists a compaction kept, each once per distinct content). A chunk two
// chunks behind the newest keeps its distinct values in a table and each slot as a 1-byte (up to
// 256 distinct values) or 2-byte index into it: 64 KiB or 128 KiB instead of 256 KiB. Nothing
// changes for a reader: get() reads through the table, and a write into a frozen chunk (slot(),
// put() of an old index, which Python's pickler never does) thaws it first.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class PickleMemo {
public:
    void put(uint64_t index, PyRef ref);
    bool get(uint64_t index, PyRef& out) const {
        if (index < dense_) {
            const Chunk& chunk = chunks_[index >> kChunkBits];
            const uint64_t i = index & kChunkMask;
            if (chunk.cells) out = chunk.cells[i];
            else out = chunk.table[chunk.narrow ? chunk.narrow[i] : chunk.wide[i]];
            return true;
        }
        if (sparse_.empty()) return false;
        return getSparse(index, out);
    }
    uint64_t count() const { return dense_ + sparse_.size(); }
    // Where index's value is kept (for a compaction that moves values); null when never stored.
    // Valid until the next append() (which may freeze an old chunk).
    PyRef* slot(uint64_t index);

    // For a reader that stores values tentatively and may take them back (EntryBatchDecoder): a
    // put that only appends (index == count(), nothing sparse), and the memo cut back to `count`
    // slots, which undoes such appends.
    bool appends(uint64_t index) const { return sparse_.empty() && index == dense_; }
    void append(PyRef ref);
    void cutBack(uint64_t count) {
        if (sparse_.empty() && count < dense_) dense_ = count;
    }

    // Bytes the dense slots take (tests and benchmarks: how well freezing works).
    std::size_t denseBytes() const;
    static constexpr uint64_t kChunkSlots = uint64_t{1} << 16;
    // How many chunks behind the newest one a chunk is frozen.
    static constexpr std::size_t kFreezeBehind = 2;

private:
    static constexpr unsigned kChunkBits = 16;
    static constexpr uint64_t kChunkMask = kChunkSlots - 1;
    struct Chunk {
        std::unique_ptr<PyRef[]> cells;         // thawed: every slot's value
        std::vector<PyRef> table;              // frozen: the distinct values
        std::unique_ptr<uint8_t[]> narrow;     // frozen, at most 256 distinct values
        std::unique_ptr<uint16_t[]> wide;      // frozen, more
    };
    // The slot, in a thawed chunk (a frozen one is thawed first).
    PyRef& writable(uint64_t index);
    static void freeze(Chunk& chunk);
    static void thaw(Chunk& chunk);
    bool getSparse(uint64_t index, PyRef& out) const;

    std::vector<Chunk> chunks_;
    uint64_t dense_ = 0;  // slots [0, dense_) are stored
    std::unordered_map<uint64_t, PyRef> sparse_;
};

}  // namespace allocscope::formats
