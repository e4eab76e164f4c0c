#include "storage/formats/PyTree.h"

#include <cstring>
#include <iterator>
#include <limits>

#include "storage/formats/FormatError.h"

namespace allocscope::formats {

PyRef PyTree::push(PyNode node) {
    // Handles are 32-bit to keep nodes small; 4 billion values would need a file of many GB.
    if (slots_.size() >= std::numeric_limits<PyRef>::max()) {
        throw FormatError("too many values (more than 4 billion)", "byte " + std::to_string(node.offset));
    }
    const PyRef ref = static_cast<PyRef>(slots_.size());
    if (ref % kOffsetBlock == 0) blockBase_.push_back(node.offset);
    const uint64_t base = blockBase_.back();
    uint16_t delta = kFarDelta;
    if (node.offset >= base && node.offset - base < kFarDelta) {
        delta = static_cast<uint16_t>(node.offset - base);
    } else {
        farOffsets_.emplace(ref, node.offset);
    }
    slots_.push_back(Slot{node.kind, node.negative, delta, node.index, node.bits});
    return ref;
}

uint64_t PyTree::offset(PyRef ref) const {
    const uint16_t delta = slots_[ref].delta;
    if (delta != kFarDelta) return blockBase_[ref / kOffsetBlock] + delta;
    return farOffsets_.at(ref);
}

PyRef PyTree::addNone(uint64_t offset) { return push(PyNode{PyKind::None, false, 0, 0, offset}); }

PyRef PyTree::addBool(bool value, uint64_t offset) {
    return push(PyNode{PyKind::Bool, false, 0, value ? 1u : 0u, offset});
}

PyRef PyTree::addInt(uint64_t bits, bool negative, uint64_t offset) {
    return push(PyNode{PyKind::Int, negative, 0, bits, offset});
}

PyRef PyTree::addFloat(double value, uint64_t offset) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return push(PyNode{PyKind::Float, false, 0, bits, offset});
}

PyRef PyTree::addStr(std::string text, uint64_t offset) {
    strings_.push_back(std::move(text));
    return push(PyNode{PyKind::Str, false, static_cast<uint32_t>(strings_.size() - 1), 0, offset});
}

PyRef PyTree::addBytes(std::string data, uint64_t offset) {
    strings_.push_back(std::move(data));
    return push(PyNode{PyKind::Bytes, false, static_cast<uint32_t>(strings_.size() - 1), 0, offset});
}

PyRef PyTree::addContainer(PyKind kind, uint64_t offset) {
    spans_.emplace_back();
    return push(PyNode{kind, false, static_cast<uint32_t>(spans_.size() - 1), 0, offset});
}

void PyTree::append(PyRef container, PyItems items) {
    if (items.empty()) return;
    Span& s = spans_[slots_[container].index];
    if (s.count == kSpilled) {
        std::vector<PyRef>& own = spilled_[s.begin];
        own.insert(own.end(), items.begin(), items.end());
        return;
    }
    const bool last = s.count == 0 || s.begin + static_cast<size_t>(s.count) == flat_.size();
    if (last) {
        // Handles and counts are 32-bit like PyRef; this many items would need a file of many GB.
        if (flat_.size() + items.size() >= kSpilled) {
            throw FormatError("too many container items (more than 4 billion)", "byte " + std::to_string(offset(container)));
        }
        if (s.count == 0) s.begin = static_cast<uint32_t>(flat_.size());
        flat_.insert(flat_.end(), items.begin(), items.end());
        s.count += static_cast<uint32_t>(items.size());
        return;
    }
    std::vector<PyRef> own(flat_.begin() + s.begin, flat_.begin() + s.begin + s.count);
    own.insert(own.end(), items.begin(), items.end());
    spilled_.push_back(std::move(own));
    s.begin = static_cast<uint32_t>(spilled_.size() - 1);
    s.count = kSpilled;
}

void PyTree::truncate(const Mark& mark) {
    slots_.resize(mark.nodes);
    blockBase_.resize((mark.nodes + kOffsetBlock - 1) / kOffsetBlock);
    for (auto it = farOffsets_.begin(); it != farOffsets_.end();) {
        it = it->first >= mark.nodes ? farOffsets_.erase(it) : std::next(it);
    }
    strings_.resize(mark.strings);
    spans_.resize(mark.spans);
    flat_.resize(mark.flat);
    spilled_.resize(mark.spilled);
}

double PyTree::floatValue(PyRef ref) const {
    double value = 0;
    std::memcpy(&value, &slots_[ref].bits, sizeof value);
    return value;
}

bool PyTree::find(PyRef dict, std::string_view key, PyRef& out) const {
    const PyItems pairs = items(dict);
    for (size_t i = pairs.size(); i >= 2; i -= 2) {
        const PyRef k = pairs[i - 2];
        if (slots_[k].kind == PyKind::Str && strings_[slots_[k].index] == key) {
            out = pairs[i - 1];
            return true;
        }
    }
    return false;
}

const char* PyTree::kindName(PyKind kind) {
    switch (kind) {
    case PyKind::None: return "None";
    case PyKind::Bool: return "a bool";
    case PyKind::Int: return "an int";
    case PyKind::Float: return "a float";
    case PyKind::Str: return "a str";
    case PyKind::Bytes: return "bytes";
    case PyKind::List: return "a list";
    case PyKind::Tuple: return "a tuple";
    case PyKind::Dict: return "a dict";
    }
    return "a value";
}

}  // namespace allocscope::formats
