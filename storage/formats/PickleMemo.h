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
// 256 distinct values) or 2-byte index into it: 64 KiB or 128 KiB instead of 256 KiB.
//
// Frozen chunks leave memory: their table and codes are appended to a ColdBytes store, and the
// chunk keeps only the offsets. Any slot may still be read (real PyTorch files refer back to frame
// dicts stored at the very start on almost every entry), so nothing is forgotten; a read of a
// frozen slot is two loads at an offset from the store's base. By default the store is memory
// (MemoryColdBytes: one or two bytes a slot stay, as before); the streaming import supplies one
// backed by a temporary file (useColdBytes), and then what the memo holds in memory is its two
// newest chunks and a 32-byte record per older one, whatever the file's size. The store is
// trimmed at each freeze (every 65,536 slots): the pages read since then leave the resident set,
// and the few read on every entry come straight back from the page cache.
//
// Nothing changes for a reader: get() reads through the table, and a write into a frozen chunk
// (slot(), put() of an old index, which Python's pickler never does) thaws it first, into memory
// until the next chunk is started, which freezes it again (a new copy in the store: the old one is
// left unused there), so writes into old slots do not make memory grow either.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "storage/formats/ColdBytes.h"
#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class PickleMemo {
public:
    PickleMemo();
    // Frozen chunks go to `store` (not owned; it must outlive the memo). Only before anything is
    // stored: the memo does not move what it froze before.
    void useColdBytes(ColdBytes& store);

    void put(uint64_t index, PyRef ref);
    bool get(uint64_t index, PyRef& out) const {
        if (index < dense_) {
            const Chunk& chunk = chunks_[index >> kChunkBits];
            const uint64_t i = index & kChunkMask;
            if (chunk.cells) out = chunk.cells[i];
            else out = frozen(chunk, i);
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
    void append(PyRef ref) {
        // Inline for the usual case, a slot in the newest chunk (two or three a trace entry).
        const uint64_t chunk = dense_ >> kChunkBits;
        if (chunk + 1 == chunks_.size() && chunks_[chunk].cells) {
            chunks_[chunk].cells[dense_++ & kChunkMask] = ref;
            return;
        }
        appendInNewChunk(ref);
    }
    void cutBack(uint64_t count) {
        if (sparse_.empty() && count < dense_) {
            dense_ = count;
            ++rewrites_;  // the cut slots are appended again with other values
        }
    }
    // Stores the value of a slot the same reader appended (as a placeholder) since its last
    // cutBack: not a rewrite, since no value of that slot was ever read (rewrites()).
    void setAppended(uint64_t index, PyRef ref) { writable(index) = ref; }
    // How many times a stored value may have changed: put() over an index, slot() (a compaction
    // moving values), cutBack(). While it stays the same, a get() of an index that succeeded
    // gives the same value again (EntryBatchDecoder remembers reads by it).
    uint64_t rewrites() const { return rewrites_; }

    // Bytes the dense slots take, in memory or in the store (tests and benchmarks: how well
    // freezing works).
    std::size_t denseBytes() const;
    // Bytes the memo holds in the process's memory: thawed chunks, chunk records, sparse entries
    // and the store's heapBytes() (none for a file-backed store). What must not grow with the file.
    std::size_t heapBytes() const;
    static constexpr uint64_t kChunkSlots = uint64_t{1} << 16;
    // How many chunks behind the newest one a chunk is frozen.
    static constexpr std::size_t kFreezeBehind = 2;

private:
    static constexpr unsigned kChunkBits = 16;
    static constexpr uint64_t kChunkMask = kChunkSlots - 1;
    struct Chunk {
        std::unique_ptr<PyRef[]> cells;  // thawed: every slot's value
        // Frozen (no cells): offsets in the store of the distinct values (a PyRef each) and of
        // the slots' codes (a uint8_t each when narrow, else a uint16_t), native byte order.
        uint64_t table = 0;
        uint64_t codes = 0;
        uint32_t distinct = 0;
        bool narrow = false;
    };
    PyRef frozen(const Chunk& chunk, uint64_t i) const {
        // memcpy, not a cast: the store is bytes (the compiler makes each a plain load).
        const uint8_t* codes = cold_ + chunk.codes;
        uint32_t code = 0;
        if (chunk.narrow) {
            code = codes[i];
        } else {
            uint16_t wide = 0;
            std::memcpy(&wide, codes + 2 * i, sizeof wide);
            code = wide;
        }
        PyRef value = 0;
        std::memcpy(&value, cold_ + chunk.table + code * sizeof(PyRef), sizeof value);
        return value;
    }
    // The slot, in a thawed chunk (a frozen one is thawed first).
    PyRef& writable(uint64_t index);
    void appendInNewChunk(PyRef ref);  // append() past the newest chunk (or into a frozen one)
    void freeze(Chunk& chunk);
    void thaw(Chunk& chunk) const;
    bool getSparse(uint64_t index, PyRef& out) const;

    std::unique_ptr<ColdBytes> ownStore_;  // the in-memory default
    ColdBytes* store_ = nullptr;
    const uint8_t* cold_ = nullptr;  // store_->data(), taken again after each append to it
    std::vector<Chunk> chunks_;
    uint64_t dense_ = 0;  // slots [0, dense_) are stored
    uint64_t rewrites_ = 0;
    std::unordered_map<uint64_t, PyRef> sparse_;
    std::vector<std::size_t> thawed_;  // chunks thawed since the last chunk was started
};

}  // namespace allocscope::formats
