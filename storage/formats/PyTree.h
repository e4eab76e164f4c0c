#pragma once
// A small tree of Python values (what a snapshot pickle or its JSON form contains): None, bool,
// int, float, str, bytes, list, tuple, dict.
//
// Why an arena with integer handles instead of a tree of owning pointers: a pickle's memo shares
// objects by reference (a dict is memoised while still empty and filled later; frames are shared
// by thousands of events), a hostile pickle can make a list contain itself, and nesting can be a
// million levels deep. With every node in one vector, sharing and cycles are just repeated
// indices, and destruction is freeing a few vectors: nothing recurses, nothing leaks.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace allocscope::formats {

enum class PyKind : uint8_t { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict };

using PyRef = uint32_t;
// A container's items (a dict's are key, value, key, value ...): a view into the tree, valid
// until the tree is next modified.
using PyItems = std::span<const PyRef>;

// One value, as readers see it (node() builds it). Stored more compactly inside the tree.
struct PyNode {
    PyKind kind = PyKind::None;
    bool negative = false;  // Int: the value is the int64 `bits`; otherwise the uint64 `bits`
    uint32_t index = 0;     // Str/Bytes: into strings(); List/Tuple/Dict: into items()
    uint64_t bits = 0;      // Bool: 0/1; Int: value bits; Float: IEEE-754 bits
    uint64_t offset = 0;    // byte offset in the input where the value was made (for messages)
};

class PyTree {
public:
    PyRef addNone(uint64_t offset);
    PyRef addBool(bool value, uint64_t offset);
    // An int in [-2^63, 2^64 - 1]: `negative` selects int64 interpretation of `bits`.
    PyRef addInt(uint64_t bits, bool negative, uint64_t offset);
    PyRef addFloat(double value, uint64_t offset);
    PyRef addStr(std::string text, uint64_t offset);
    PyRef addBytes(std::string data, uint64_t offset);
    // An empty List, Tuple or Dict; fill it with append (a dict holds key, value, key, value ...).
    PyRef addContainer(PyKind kind, uint64_t offset);
    // Appends items to a container. Readers append a container's items in one call where they
    // can (see items_ below): that is what keeps the tree small.
    void append(PyRef container, PyItems items);

    PyNode node(PyRef ref) const {
        const Slot& n = slots_[ref];
        return PyNode{n.kind, n.negative, n.index, n.bits, offset(ref)};
    }
    PyKind kind(PyRef ref) const { return slots_[ref].kind; }
    // node()'s fields one by one, without assembling the offset (for hot loops).
    uint64_t bits(PyRef ref) const { return slots_[ref].bits; }
    bool negative(PyRef ref) const { return slots_[ref].negative; }
    uint32_t index(PyRef ref) const { return slots_[ref].index; }
    size_t size() const { return slots_.size(); }
    // The byte offset in the input where the value was made.
    uint64_t offset(PyRef ref) const;

    const std::string& text(PyRef ref) const { return strings_[slots_[ref].index]; }
    // Str and Bytes nodes index a table of texts; memo-shared strings share one entry, which lets
    // readers cache per-entry facts (SnapshotReader caches which key a string names).
    size_t textCount() const { return strings_.size(); }
    PyItems items(PyRef ref) const {
        const Span& s = spans_[slots_[ref].index];
        if (s.count == kSpilled) return spilled_[s.begin];
        return PyItems(flat_.data() + s.begin, s.count);
    }
    double floatValue(PyRef ref) const;

    // Dict lookup by str key; the last occurrence wins, as a Python dict keeps the last SETITEM.
    // Returns false when the key is absent.
    bool find(PyRef dict, std::string_view key, PyRef& out) const;

    // "an int", "a str", ... for messages.
    static const char* kindName(PyKind kind);

    // The tree's size at one moment, for a streaming reader that converts part of the tree and
    // then drops it (PickleReader with a TraceBatchSink): truncate(mark) forgets every value and
    // text made since, and every item appended to a container made since. Items appended since to
    // an older container are forgotten too: the caller must not truncate then.
    struct Mark {
        size_t nodes = 0, strings = 0, spans = 0, flat = 0, spilled = 0;
    };
    Mark mark() const { return Mark{slots_.size(), strings_.size(), spans_.size(), flat_.size(), spilled_.size()}; }
    void truncate(const Mark& mark);

    PyRef root = 0;

private:
    // 16 bytes per node (a 100 MB snapshot has 7 million, mostly ints). The input offset, needed
    // only for messages, is not stored whole: nodes are made in input order, so each block of
    // kOffsetBlock nodes keeps its first offset and a node keeps its distance from it in what was
    // padding. A distance that does not fit (a long string in between) goes to a side table.
    struct Slot {
        PyKind kind = PyKind::None;
        bool negative = false;
        uint16_t delta = 0;  // offset - block base, or kFarDelta
        uint32_t index = 0;
        uint64_t bits = 0;
    };
    static constexpr size_t kOffsetBlock = 256;
    static constexpr uint16_t kFarDelta = 0xFFFF;

    PyRef push(PyNode node);

    std::vector<Slot> slots_;
    std::vector<uint64_t> blockBase_;                  // by ref / kOffsetBlock
    std::unordered_map<PyRef, uint64_t> farOffsets_;  // refs whose delta is kFarDelta
    std::vector<std::string> strings_;
    // Container items, flat: a container's items are one run of flat_ (8 bytes of Span plus 4 per
    // item, instead of a std::vector and its heap block per container: a 100 MB snapshot has
    // a million dicts). A container filled in one go, or whose run is still the last one, stays in
    // flat_; one filled again after another container's run (a pickle's long list, APPENDS in
    // batches of 1000 around the dicts they hold) moves to a vector of its own in spilled_, once,
    // leaving its old run unused.
    struct Span {
        uint32_t begin = 0;  // into flat_, or into spilled_ when count is kSpilled
        uint32_t count = 0;
    };
    static constexpr uint32_t kSpilled = 0xFFFFFFFF;
    std::vector<Span> spans_;
    std::vector<PyRef> flat_;
    std::vector<std::vector<PyRef>> spilled_;
};

}  // namespace allocscope::formats
