#include "storage/formats/EntryBatchDecoder.h"

#include <algorithm>
#include <string_view>

#include "storage/formats/Utf8.h"

namespace allocscope::formats {
namespace {

constexpr uint8_t kMemoize = 0x94;
constexpr uint8_t kShortBinUnicode = 0x8c;
constexpr uint8_t kLong1 = 0x8a;
constexpr size_t kKnownTexts = 8;

// LONG1's operand of n <= 8 bytes: little-endian two's complement, as the generic read takes it.
// `wide`: 8 bytes may be read at p (the file goes on), so one load and a shift do it.
void twosComplement(const unsigned char* p, size_t n, uint64_t& bits, bool& negative, bool wide) {
    if (wide && n > 0 && std::endian::native == std::endian::little) {
        uint64_t v = 0;
        std::memcpy(&v, p, 8);
        const unsigned drop = static_cast<unsigned>(64 - 8 * n);  // the bytes past the operand
        const auto value = static_cast<int64_t>(v << drop) >> drop;  // arithmetic: the sign fills
        bits = static_cast<uint64_t>(value);
        negative = value < 0;
        return;
    }
    bits = 0;
    negative = n > 0 && (p[n - 1] & 0x80) != 0;
    const uint64_t fill = negative ? 0xFF : 0x00;
    for (size_t i = 0; i < 8; ++i) bits |= (i < n ? uint64_t(p[i]) : fill) << (8 * i);
}

bool ascii(const unsigned char* p, size_t n) {
    unsigned char any = 0;
    for (size_t i = 0; i < n; ++i) any |= p[i];
    return (any & 0x80) == 0;
}

}  // namespace

bool EntryBatchDecoder::nextAfterFrames(uint8_t& op) {
    while (true) {
        if (p_ == end_) return false;
        op = *p_++;
        if (op != kFrameOp) return true;
        // FRAME: a framing hint whose declared frame must exist (else the generic read says so).
        if (!has(8)) return false;
        const uint64_t n = le(8);
        if (n > fileSize_ - pos()) return false;
    }
}

bool EntryBatchDecoder::memoSlot(int64_t& index) {
    index = -1;
    uint8_t op = 0;
    if (!peek(op)) return false;
    uint64_t at = 0;
    if (op == kMemoize) {
        ++p_;
        at = memo_.count();
    } else if (op == 'q' || op == 'r') {
        const size_t width = op == 'q' ? 1 : 4;
        if (!has(1 + width)) return false;
        ++p_;
        at = le(width);
    } else {
        return true;  // not memoised
    }
    // Only appends can be taken back by cutting the memo (PickleMemo::appends); a put anywhere
    // else is left to the generic read.
    if (!memo_.appends(at)) return false;
    memo_.append(TreeCompactor::kDropped);
    index = static_cast<int64_t>(at);
    return true;
}

void EntryBatchDecoder::set(int64_t index, PyRef ref) {
    if (index < 0) return;
    memo_.setAppended(static_cast<uint64_t>(index), ref);  // memoSlot() appended it
    // A value made in this batch is a memo root of the next compaction, as in the generic read.
    if (ref >= older_) memoTouched_.push_back(static_cast<uint64_t>(index));
}

bool EntryBatchDecoder::get(size_t width, PyRef& out) {
    if (!has(width)) return false;
    // An entry dict of this batch (kDropped) or a slot never stored: the generic read decides.
    return memo_.get(le(width), out) && out != TreeCompactor::kDropped;
}

PyRef EntryBatchDecoder::keptStr(std::string_view text) {
    for (const Known& k : known_) {
        if (k.text == text) return k.ref;
    }
    const PyRef ref = compactor_.keptStr(text);
    if (ref != TreeCompactor::kDropped) {
        if (known_.size() == kKnownTexts) known_.erase(known_.begin());
        known_.push_back(Known{std::string(text), ref});
    }
    return ref;
}

PyRef EntryBatchDecoder::keptList() {
    // Entries repeat a few frame lists (and the empty one): remembered by their items, in a small
    // table indexed by a hash of them. A kept value never changes, so a hit stays right.
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the handles
    for (const PyRef r : items_) h = (h ^ r) * 1099511628211ull;
    KnownList& slot = knownLists_[h % knownLists_.size()];
    if (slot.ref != TreeCompactor::kDropped && slot.items == items_) return slot.ref;
    const PyRef ref = compactor_.keptList(PyItems(items_));
    if (ref != TreeCompactor::kDropped) {
        slot.items = items_;
        slot.ref = ref;
    }
    return ref;
}

bool EntryBatchDecoder::str(size_t lengthWidth, uint64_t opOffset, PyRef& out) {
    if (!has(lengthWidth)) return false;
    const uint64_t n = le(lengthWidth);
    if (!has(n)) return false;
    const unsigned char* text = p_;
    p_ += n;
    const std::string_view view(reinterpret_cast<const char*>(text), n);
    if (!ascii(text, n) && Utf8::firstInvalid(view) != std::string_view::npos) return false;
    out = keptStr(view);
    if (out == TreeCompactor::kDropped) out = tree_.addStr(std::string(view), opOffset);
    int64_t slot = -1;
    if (!memoSlot(slot)) return false;
    set(slot, out);
    return true;
}

bool EntryBatchDecoder::list(uint64_t opOffset, PyRef& out) {
    int64_t slot = -1;
    if (!memoSlot(slot)) return false;
    items_.clear();
    uint8_t op = 0;
    if (!peek(op)) return false;
    const unsigned char* marked = nullptr;  // after a MARK, when the list's bytes had no FRAME
    KnownBytes* known = nullptr;
    if (op == '(') {  // MARK GET ... APPENDS
        ++p_;
        known = bytesSlot();
        if (known != nullptr && readsAs(*known)) {
            p_ += known->bytes.size();
            out = known->ref;
            set(slot, out);
            return true;
        }
        marked = p_;
        size_t plain = 1;  // the bytes of the GETs and the APPENDS
        while (true) {
            if (!next(op)) return false;
            if (op == 'e') break;
            PyRef item = 0;
            if ((op != 'h' && op != 'j') || !get(op == 'h' ? 1 : 4, item) || item >= older_) return false;
            items_.push_back(item);
            plain += op == 'h' ? 2 : 5;
        }
        if (static_cast<size_t>(p_ - marked) != plain) marked = nullptr;  // a FRAME stood between
    } else if (op == 'h' || op == 'j') {  // one item: GET APPEND, or this GET is the next key
        const unsigned char* at = p_;
        ++p_;
        PyRef item = 0;
        if (!get(op == 'h' ? 1 : 4, item)) return false;
        uint8_t after = 0;
        if (peek(after) && after == 'a' && item < older_) {
            ++p_;
            items_.push_back(item);
        } else {
            p_ = at;
        }
    }
    out = keptList();
    if (out == TreeCompactor::kDropped) {
        out = tree_.addContainer(PyKind::List, opOffset);
        tree_.append(out, PyItems(items_));
    } else if (marked != nullptr && known != nullptr) {
        known->bytes.assign(marked, p_);
        known->ref = out;
        known->rewrites = memo_.rewrites();
        known->older = older_;
    }
    set(slot, out);
    return true;
}

EntryBatchDecoder::KnownBytes* EntryBatchDecoder::bytesSlot() {
    if (!has(8)) return nullptr;
    uint64_t first = 0;
    std::memcpy(&first, p_, 8);
    return &knownBytes_[(first * 0x9E3779B97F4A7C15ull) >> 58];  // 64 slots
}

bool EntryBatchDecoder::readsAs(const KnownBytes& known) const {
    const std::vector<unsigned char>& bytes = known.bytes;
    return known.ref != TreeCompactor::kDropped && known.rewrites == memo_.rewrites() && known.older == older_ &&
           has(bytes.size()) && std::memcmp(p_, bytes.data(), bytes.size()) == 0;
}

bool EntryBatchDecoder::value(PyRef& ref, uint64_t& bits, bool& negative) {
    const uint64_t opOffset = pos();
    uint8_t op = 0;
    if (!next(op)) return false;
    ref = DecodedEntries::kInlineInt;
    negative = false;
    switch (op) {
    case 'K':  // BININT1
        if (!has(1)) return false;
        bits = le(1);
        return true;
    case 'M':  // BININT2
        if (!has(2)) return false;
        bits = le(2);
        return true;
    case 'J': {  // BININT: signed 32-bit
        if (!has(4)) return false;
        const auto v = static_cast<int32_t>(static_cast<uint32_t>(le(4)));
        bits = static_cast<uint64_t>(static_cast<int64_t>(v));
        negative = v < 0;
        return true;
    }
    case kLong1: {  // wider than 8 bytes: the generic read
        if (!has(1)) return false;
        const size_t n = static_cast<size_t>(le(1));
        if (n > 8 || !has(n)) return false;
        twosComplement(p_, n, bits, negative, has(8));
        p_ += n;
        return true;
    }
    case kShortBinUnicode: return str(1, opOffset, ref);
    case 'X': return str(4, opOffset, ref);  // BINUNICODE
    case ']': return list(opOffset, ref);    // EMPTY_LIST
    case 'h': return get(1, ref);            // BINGET
    case 'j': return get(4, ref);            // LONG_BINGET
    default: return false;
    }
}

void EntryBatchDecoder::reset() {
    memo_.cutBack(memoAtStart_);
    memoTouched_.resize(touchedAtStart_);
    batch_.clear();
}

void EntryBatchDecoder::undo() { reset(); }

const unsigned char* EntryBatchDecoder::decode(const unsigned char* p, const unsigned char* end, uint64_t offset,
                                               uint64_t fileSize, size_t olderNodes) {
    p_ = p;
    begin_ = p;
    end_ = end;
    offset_ = offset;
    fileSize_ = fileSize;
    older_ = olderNodes;
    memoAtStart_ = memo_.count();
    touchedAtStart_ = memoTouched_.size();
    batch_.clear();
    keys_.fill(KnownKey{});  // the memo may have changed since the last batch (generic puts, a compaction)
    while (true) {
        uint8_t op = 0;
        if (!next(op)) break;
        if (op == 'e') {  // APPENDS: the batch is complete
            if (batch_.size() > 0) return p_;
            break;
        }
        int64_t slot = -1;
        // EMPTY_DICT [put] MARK: the entry's slot stays kDropped, as after a compaction.
        if (op != '}' || !memoSlot(slot) || !next(op) || op != '(') break;
        const size_t entryStart = batch_.fields.size();
        bool ok = true;
        while (ok) {
            if (!peek(op)) {
                ok = false;
                break;
            }
            if (op == 'u') {  // SETITEMS
                ++p_;
                break;
            }
            // Decoded in place: a copy of a field written piecemeal just before stalls the CPU.
            DecodedField& field = batch_.fields.emplace_back();
            uint64_t keyBits = 0;
            bool keyNegative = false;
            // A key is nearly always a memo GET of the key's str: read here, apart from the values
            // (a branch of its own predicts better than the shared switch in value()).
            if ((op == 'j' && has(5)) || (op == 'h' && has(2))) {
                ++p_;
                ok = key(batch_.fields.size() - 1 - entryStart, le(op == 'j' ? 4 : 1), field.key);
            } else {
                ok = value(field.key, keyBits, keyNegative);
            }
            if (!ok) break;
            // The values most entries hold, read here before value()'s switch for the same reason.
            const uint8_t c = p_ < end_ ? *p_ : 0;
            if ((c == 'j' && has(5)) || (c == 'h' && has(2))) {  // LONG_BINGET, BINGET: the action, the strs
                ++p_;
                ok = memo_.get(le(c == 'j' ? 4 : 1), field.value) && field.value != TreeCompactor::kDropped;
            } else if (c == kLong1 && has(2) && p_[1] <= 8 && has(2 + size_t{p_[1]})) {  // addresses, times
                field.value = DecodedEntries::kInlineInt;
                const size_t n = p_[1];
                p_ += 2;
                twosComplement(p_, n, field.bits, field.negative, has(8));
                p_ += n;
            } else {
                ok = value(field.value, field.bits, field.negative);
            }
        }
        if (!ok) break;
        batch_.ends.push_back(static_cast<uint32_t>(batch_.fields.size()));
    }
    reset();
    return nullptr;
}

}  // namespace allocscope::formats
