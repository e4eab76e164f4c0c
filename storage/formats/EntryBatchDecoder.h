#pragma once
// The fast path of a streaming pickle read (PickleReader::readFile with a TraceBatchSink): reads a
// batch of `device_traces[d]` entry dicts straight from the file's bytes into DecodedEntries,
// without the generic stack machine and without a value-tree node for each dict and int.
//
// Why: a 1 GB snapshot has 12 million entries of about twenty opcodes each. Made into tree values,
// dropped again by TreeCompactor and read back by the converter, each entry cost ~430 ns; most of
// it was the generic machinery per value, not the work an entry needs.
//
// It accepts exactly the shape Python's pickler gives an entry, in any key order and with any
// keys: EMPTY_DICT [memo put] MARK (key value)* SETITEMS, where a key or value is an int
// (BININT1, BININT2, BININT, LONG1 of up to 8 bytes), a str (SHORT_BINUNICODE, BINUNICODE, valid
// UTF-8) or a memo GET, each optionally memoised, or a list (EMPTY_LIST [memo put], then nothing,
// one GET and APPEND, or MARK GETs APPENDS) of values made before the batch; FRAME opcodes may
// stand between any two. The batch ends at the APPENDS after its entries. Anything else, or bytes
// beyond the window it is given, and it gives up: it leaves nothing behind, and the reader parses
// the same bytes the generic way, which also reports whatever is wrong with them. So the fast path
// never decides what a file means or which error it gets; it only skips work.
//
// Its effect on the memo is the one the generic read has after the batch's compaction: an entry
// dict's slot is TreeCompactor::kDropped at once, and a str or list that a compaction kept before
// (TreeCompactor::keptStr, keptList) is stored as that kept value instead of a new one.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "storage/formats/DecodedEntries.h"
#include "storage/formats/PickleMemo.h"
#include "storage/formats/PyTree.h"
#include "storage/formats/TreeCompactor.h"

namespace allocscope::formats {

class EntryBatchDecoder {
public:
    // memoTouched: the reader's list of memo indices whose value was made since its last
    // compaction (the compaction's memo roots); the decoder adds those it stores young values in.
    EntryBatchDecoder(PyTree& tree, PickleMemo& memo, TreeCompactor& compactor, std::vector<uint64_t>& memoTouched)
        : tree_(tree), memo_(memo), compactor_(compactor), memoTouched_(memoTouched) {}

    // Reads from `p` (just after the MARK that opens a batch on a device_traces list; file offset
    // `offset`) no further than `end`. Returns the byte after the batch's APPENDS, with its entries
    // in batch(), or nullptr (nothing left behind). `olderNodes`: tree values below it were made
    // before the reader's last compaction and stay.
    const unsigned char* decode(const unsigned char* p, const unsigned char* end, uint64_t offset, uint64_t fileSize,
                                size_t olderNodes);
    const DecodedEntries& batch() const { return batch_; }
    // Takes back the memo slots of the last successful decode() (the sink refused its entries).
    void undo();

private:
    uint64_t pos() const { return offset_ + static_cast<uint64_t>(p_ - begin_); }
    bool has(size_t n) const { return static_cast<size_t>(end_ - p_) >= n; }
    uint64_t le(size_t width) {
        uint64_t v = 0;
        if (width == 4 && std::endian::native == std::endian::little) {
            uint32_t w = 0;
            std::memcpy(&w, p_, 4);  // one load, not four (a memo index: on the critical path)
            v = w;
        } else {
            for (size_t i = 0; i < width; ++i) v |= uint64_t(p_[i]) << (8 * i);
        }
        p_ += width;
        return v;
    }
    // A key's memo GET (LONG_BINGET `index`), the k-th of its entry: entries repeat their keys in
    // the same order, so the k-th key's index and value are remembered for the batch (the memo
    // only grows during one, so a remembered slot keeps its value) and found without the memo.
    bool key(size_t k, uint64_t index, PyRef& out) {
        if (k < kKeySlots && keys_[k].index == index) {
            out = keys_[k].ref;
            return true;
        }
        if (!memo_.get(index, out) || out == TreeCompactor::kDropped) return false;
        if (k < kKeySlots) keys_[k] = KnownKey{index, out};
        return true;
    }
    // The next opcode (FRAMEs, checked as the generic read checks them, are passed over). Inline
    // for the usual case: it is asked for every opcode of every entry.
    bool next(uint8_t& op) {
        if (p_ != end_ && *p_ != kFrameOp) {
            op = *p_++;
            return true;
        }
        return nextAfterFrames(op);
    }
    bool nextAfterFrames(uint8_t& op);
    static constexpr uint8_t kFrameOp = 0x95;
    bool peek(uint8_t& op) {
        if (!next(op)) return false;
        --p_;
        return true;
    }
    // An optional memo put after a value: appends a slot (kDropped until set()) and gives its index.
    bool memoSlot(int64_t& index);
    void set(int64_t index, PyRef ref);
    bool get(size_t width, PyRef& out);
    // A key or value: an int is kept in place (ref = kInlineInt), anything else is a tree value.
    bool value(PyRef& ref, uint64_t& bits, bool& negative);
    bool str(size_t lengthWidth, uint64_t opOffset, PyRef& out);
    bool list(uint64_t opOffset, PyRef& out);
    PyRef keptStr(std::string_view text);
    PyRef keptList();  // of items_
    void reset();

    PyTree& tree_;
    PickleMemo& memo_;
    TreeCompactor& compactor_;
    std::vector<uint64_t>& memoTouched_;

    const unsigned char* p_ = nullptr;
    const unsigned char* begin_ = nullptr;
    const unsigned char* end_ = nullptr;
    uint64_t offset_ = 0;
    uint64_t fileSize_ = 0;
    size_t older_ = 0;
    uint64_t memoAtStart_ = 0;
    size_t touchedAtStart_ = 0;
    DecodedEntries batch_;
    std::vector<PyRef> items_;  // a list's items, reused
    // The texts most recently found kept (an entry's "N/A", ""): a kept value never changes.
    struct Known {
        std::string text;
        PyRef ref = 0;
    };
    std::vector<Known> known_;
    struct KnownList {
        std::vector<PyRef> items;
        PyRef ref = TreeCompactor::kDropped;
    };
    std::array<KnownList, 64> knownLists_;
    // MARK GET ... APPENDS lists that keptList() found kept, by their bytes (no FRAME among them),
    // in a small table indexed by their first eight. Entries repeat the same GETs of the same
    // frame dicts: while no memo value changed (PickleMemo::rewrites: appends only, so each GET
    // reads what it read then) and no compaction moved the tree (olderNodes), the same bytes read
    // the same items, all older than the batch, and so the same kept list; the bytes are compared
    // instead of the list being read item by item.
    struct KnownBytes {
        std::vector<unsigned char> bytes;  // after the MARK, through the APPENDS
        PyRef ref = TreeCompactor::kDropped;
        uint64_t rewrites = 0;
        size_t older = 0;
    };
    std::array<KnownBytes, 64> knownBytes_;
    KnownBytes* bytesSlot();  // knownBytes_'s slot for the list at p_; null when under 8 bytes are left
    // The bytes at p_ (just after a list's MARK) are those of `known` and would read the same.
    bool readsAs(const KnownBytes& known) const;
    static constexpr size_t kKeySlots = 16;
    struct KnownKey {
        uint64_t index = ~uint64_t{0};
        PyRef ref = 0;
    };
    std::array<KnownKey, kKeySlots> keys_;  // key()'s, for the current decode() only
};

}  // namespace allocscope::formats
