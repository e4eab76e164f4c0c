#pragma once
// A batch of trace-entry dicts that PickleReader's fast path (EntryBatchDecoder) read straight from
// the pickle's bytes, without making a value-tree node for the dict or its ints.
//
// Each entry is its key/value pairs in file order (a later pair with the same key wins, as in a
// Python dict). A key, a string, a frames list or any value fetched from the memo is a value of
// the tree (`value`); an int written in the entry itself is kept here (`value` == kInlineInt,
// `bits` and `negative` as in PyNode).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "storage/formats/PyTree.h"

namespace allocscope::formats {

struct DecodedField {
    PyRef key = 0;
    PyRef value = 0;
    bool negative = false;
    uint64_t bits = 0;
};

struct DecodedEntries {
    static constexpr PyRef kInlineInt = 0xFFFFFFFEu;

    std::vector<DecodedField> fields;
    std::vector<uint32_t> ends;  // entry i's fields are fields[ends[i - 1], ends[i])

    size_t size() const { return ends.size(); }
    std::span<const DecodedField> entry(size_t i) const {
        const size_t begin = i == 0 ? 0 : ends[i - 1];
        return std::span<const DecodedField>(fields.data() + begin, ends[i] - begin);
    }
    void clear() {
        fields.clear();
        ends.clear();
    }
};

}  // namespace allocscope::formats
