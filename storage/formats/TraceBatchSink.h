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

#include "storage/formats/PyTree.h"

namespace allocscope::formats {

class TraceBatchSink {
public:
    virtual ~TraceBatchSink() = default;
    // `entries` are device_traces[device][first, first + entries.size()), values of `tree`. They
    // are dropped from the tree after the call (the list in the returned tree stays empty).
    virtual void onEntries(const PyTree& tree, size_t device, size_t first, PyItems entries) = 0;
    // Values from `firstRef` and texts from `firstText` on are about to be dropped and their
    // handles reused: forget anything cached under them.
    virtual void forget(PyRef firstRef, size_t firstText) = 0;
    // Called each time the reader fetches more of the file. May throw to stop the read.
    virtual void onProgress(uint64_t bytesRead, uint64_t totalBytes) {
        (void)bytesRead;
        (void)totalBytes;
    }
};

}  // namespace allocscope::formats
