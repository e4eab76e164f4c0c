#pragma once
// The pickle memo of PickleReader (and of its fast path for trace entries, EntryBatchDecoder).
//
// Python's memo is a dict keyed by any 32-bit index; PyTorch's JIT pickler uses dense BINPUT
// indices and CPython uses MEMOIZE (index = current memo size). Dense indices live in a vector; a
// hostile sparse index (LONG_BINPUT 0xffffffff) goes to a map instead of making us allocate four
// billion slots.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class PickleMemo {
public:
    void put(uint64_t index, PyRef ref);
    bool get(uint64_t index, PyRef& out) const {
        if (index < dense_.size()) {
            out = dense_[index];
            return true;
        }
        if (sparse_.empty()) return false;
        return getSparse(index, out);
    }
    uint64_t count() const { return dense_.size() + sparse_.size(); }
    // Where index's value is kept (for a compaction that moves values); null when never stored.
    PyRef* slot(uint64_t index);

    // For a reader that stores values tentatively and may take them back (EntryBatchDecoder): a
    // put that only appends (index == count(), nothing sparse), and the memo cut back to `count`
    // slots, which undoes such appends.
    bool appends(uint64_t index) const { return sparse_.empty() && index == dense_.size(); }
    void append(PyRef ref) { dense_.push_back(ref); }
    void cutBack(uint64_t count) {
        if (sparse_.empty() && count < dense_.size()) dense_.resize(static_cast<size_t>(count));
    }

private:
    bool getSparse(uint64_t index, PyRef& out) const;

    std::vector<PyRef> dense_;
    std::unordered_map<uint64_t, PyRef> sparse_;
};

}  // namespace allocscope::formats
