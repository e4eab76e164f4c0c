#pragma once
// Writes a Snapshot as a pickle (protocol 4) that Python's pickle.load and PyTorch's memory_viz
// read: the same dicts and keys PyTorch 2.11 writes, in PyTorch's key order. Protocol 4 rather
// than 5 because memory_viz's JavaScript unpickler rejected protocol 5 (PyTorch issue #183842).
// Like PyTorch, repeated strings and identical frame lists are written once and shared through
// the memo, which keeps files with long traces small. Optional trace keys (addr/device_free,
// pool_id) and allocator_settings keys are written only when present in the Snapshot. An unknown
// line, time_us or annotation device (Snapshot.h) is written as 2**64-1, TorchDynamo's own
// "unknown", which SnapshotReader reads back as unknown.
#include <string>

#include "storage/formats/Snapshot.h"

namespace allocscope::formats {

class PickleWriter {
public:
    static std::string write(const Snapshot& snapshot);
    // Writes to `path` (created or truncated). Throws FormatError when the file cannot be written.
    static void writeFile(const Snapshot& snapshot, const std::string& path);
};

}  // namespace allocscope::formats
