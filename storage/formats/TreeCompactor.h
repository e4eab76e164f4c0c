#pragma once
// Drops the values of a PyTree that a streaming read has converted, keeping those the rest of the
// pickle may still refer to (PickleReader::readFile with a TraceBatchSink).
//
// What may be referred to later: the values on the pickle machine's stack (containers still being
// filled: the top-level dict, the device_traces lists) and every value in the pickle memo (BINGET
// can fetch any of them: key strings, frame dicts, a frames list shared by several entries). The
// converted entry dicts are also in the memo; their memo slots become kDropped, and a BINGET of one
// makes the read fall back to reading the file whole (StreamingUnsupported).
//
// What keeps this bounded: Python's pickler memoises each entry's own strings ("N/A") and frames
// list, so the memo would keep one copy per entry. Kept strings are stored once per distinct text,
// and kept lists and tuples of shared values once per distinct contents; such a shared list or tuple
// is then frozen (a pickle that fills it later makes the read fall back). What still grows with the
// file is the memo's slots (about three per trace entry): one or two bytes each once PickleMemo has
// frozen their chunk, which the streaming import keeps in a temporary file (SpilledColdBytes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class TreeCompactor {
public:
    static constexpr PyRef kDropped = 0xFFFFFFFFu;  // a memo slot whose value was converted and dropped

    explicit TreeCompactor(PyTree& tree) : tree_(tree) {}

    // Keeps, of the values made since `mark`, those reachable from the roots; drops the rest and
    // rewrites every root in place. A root that is one of `dropped` becomes kDropped.
    // Stack roots are never merged with equal values (they may still be filled); memo roots may be.
    // Returns the new mark: everything below it stays for good.
    PyTree::Mark compact(const PyTree::Mark& mark, const std::vector<PyRef*>& stackRoots,
                         const std::vector<PyRef*>& memoRoots, const std::vector<PyRef>& dropped);

    // A list or tuple that stands for several equal ones of the file: it must not be filled.
    bool frozen(PyRef ref) const { return frozen_.count(ref) > 0; }

    // The value an earlier compaction kept for all strs of this text, or for all lists of these
    // older values (each made before the last compaction); kDropped when there is none yet. A
    // reader that meets such a value again may put the kept one in the memo at once: the next
    // compaction would have merged a new one into it (EntryBatchDecoder).
    PyRef keptStr(std::string_view text);
    PyRef keptList(PyItems olderItems);

private:
    struct Kept {
        PyRef from = 0;            // its handle before the compaction
        PyNode node;
        std::string text;          // Str, Bytes
        size_t itemsBegin = 0;     // containers: their items (handles before the compaction) are
        size_t itemsCount = 0;     // items_[itemsBegin, itemsBegin + itemsCount)
        PyRef to = kDropped;       // its handle after
        bool merged = false;       // a list or tuple found equal to an earlier kept one
    };
    void collect(PyRef root, const PyTree::Mark& mark);
    // Where the value made since the mark sits in kept_ (kNone: not kept). A compaction runs once
    // per batch of trace entries: a flat table over the batch's values, not a hash map.
    static constexpr uint32_t kNone = 0xFFFFFFFFu;
    static constexpr uint32_t kDroppedEntry = kNone - 1;  // during compact(): a converted entry
    uint32_t& keptAt(PyRef ref, const PyTree::Mark& mark) { return keptIndex_[ref - mark.nodes]; }
    PyRef resolve(PyRef from, const PyTree::Mark& mark);
    PyRef leaf(Kept& k);
    bool signature(const Kept& k, const PyTree::Mark& mark, std::string& out) const;
    static void appendOlder(std::string& out, PyRef item);

    PyTree& tree_;
    PyItems keptItems(const Kept& k) const { return PyItems(items_.data() + k.itemsBegin, k.itemsCount); }

    std::vector<Kept> kept_;
    std::vector<PyRef> items_;  // the kept containers' items, one buffer for all
    std::vector<uint32_t> keptIndex_;  // by handle - mark.nodes
    std::vector<PyRef> todo_;          // collect()'s work list
    std::unordered_map<std::string, PyRef> strings_;  // kept texts ('s' or 'b' + text) -> handle
    std::unordered_map<std::string, PyRef> shared_;   // kept lists and tuples by contents -> handle
    std::unordered_set<PyRef> frozen_;
    std::string lookup_;  // keptStr()'s and keptList()'s key, reused
};

}  // namespace allocscope::formats
