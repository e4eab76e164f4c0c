#pragma once
// The pickle memo of PickleReader (and of its fast path for trace entries, EntryBatchDecoder).
//
// Python's memo is a dict keyed by any 32-bit index; PyTorch's JIT pickler uses dense BINPUT
// indices and CPython uses MEMOIZE (index = current memo size). Dense indices live in a vector; a
// hostile sparse index (LONG_BINPUT 0xffffffff) goes to a map instead of making us allocate four
// billion slots.
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
            out = at(index);
            return true;
        }
        if (sparse_.empty()) return false;
        return getSparse(index, out);
    }
    uint64_t count() const { return dense_ + sparse_.size(); }
    // Where index's value is kept (for a compaction that moves values); null when never stored.
    PyRef* slot(uint64_t index);

    // For a reader that stores values tentatively and may take them back (EntryBatchDecoder): a
    // put that only appends (index == count(), nothing sparse), and the memo cut back to `count`
    // slots, which undoes such appends.
    bool appends(uint64_t index) const { return sparse_.empty() && index == dense_; }
    void append(PyRef ref);
    void cutBack(uint64_t count) {
        if (sparse_.empty() && count < dense_) dense_ = count;
    }

private:
    // Dense slots in chunks: a big snapshot's memo has tens of millions of slots, and a vector
    // would copy them all each time it grew (and hold both copies meanwhile).
    static constexpr unsigned kChunkBits = 16;
    static constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
    PyRef& at(uint64_t index) const { return chunks_[index >> kChunkBits][index & kChunkMask]; }
    bool getSparse(uint64_t index, PyRef& out) const;

    std::vector<std::unique_ptr<PyRef[]>> chunks_;
    uint64_t dense_ = 0;  // slots [0, dense_) are stored
    std::unordered_map<uint64_t, PyRef> sparse_;
};

}  // namespace allocscope::formats
