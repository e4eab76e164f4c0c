#pragma once
// What a streaming pickle read (PickleReader::readFile with a sink) hands the trace entries to.
//
// Why: a snapshot of a long training run has tens of millions of trace entries. Keeping them all
// in the value tree (16 bytes per value, a dozen values per entry) before converting any of them
// made a 1 GB file cost 4 GB. Instead, each batch of entries the pickle appends to a
// `device_traces[d]` list (APPENDS: up to 1000 at a time) is converted by the sink while its
// values are still in the tree, and then dropped from the tree.
#include <cstddef>
#include <cstdint>

#include "storage/formats/ColdBytes.h"
#include "storage/formats/DecodedEntries.h"
#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class TraceBatchSink {
public:
    virtual ~TraceBatchSink() = default;
    // `entries` are device_traces[device][first, first + entries.size()), values of `tree`. They
    // are dropped from the tree after the call (the list in the returned tree stays empty).
    virtual void onEntries(const PyTree& tree, size_t device, size_t first, PyItems entries) = 0;
    // The same for a batch that the reader's fast path read without making tree values for the
    // entry dicts (DecodedEntries; their keys, strings and lists are values of `tree`). Returns
    // false, having handed nothing on, when it would rather have them as tree values: the reader
    // then reads the batch again the generic way and calls onEntries. The default always does.
    virtual bool onDecodedEntries(const PyTree& tree, size_t device, size_t first, const DecodedEntries& entries) {
        (void)tree;
        (void)device;
        (void)first;
        (void)entries;
        return false;
    }
    // Values from `firstRef` and texts from `firstText` on are about to be dropped and their
    // handles reused: forget anything cached under them.
    virtual void forget(PyRef firstRef, size_t firstText) = 0;
    // Called each time the reader fetches more of the file. May throw to stop the read.
    virtual void onProgress(uint64_t bytesRead, uint64_t totalBytes) {
        (void)bytesRead;
        (void)totalBytes;
    }
    // Where the reader's pickle memo keeps its frozen chunks (PickleMemo::useColdBytes), asked
    // once before the read; it must outlive the read. Null (the default): in memory.
    virtual ColdBytes* coldBytes() { return nullptr; }
};

}  // namespace allocscope::formats
