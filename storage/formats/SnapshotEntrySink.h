#pragma once
// Receives a snapshot's trace entries one at a time from SnapshotReader::readStreaming, in file
// order, instead of finding them all in Snapshot::device_traces.
#include <cstddef>
#include <cstdint>

#include "storage/formats/ColdBytes.h"
#include "storage/formats/Snapshot.h"

namespace allocscope::formats {

class SnapshotEntrySink {
public:
    virtual ~SnapshotEntrySink() = default;
    // device_traces[device][index]. `entry` is valid during the call only. May throw (a bad entry:
    // FormatError naming device_traces[device][index]); the read then stops.
    virtual void onEntry(size_t device, size_t index, const TraceEntry& entry) = 0;
    // How far the read is (bytes of the file). May throw to stop the read (a cancel).
    virtual void onProgress(uint64_t bytesRead, uint64_t totalBytes) {
        (void)bytesRead;
        (void)totalBytes;
    }
    // Where the read may keep the pickle memo's old chunks (TraceBatchSink::coldBytes): formats
    // has only memory, the importer a temporary file. Asked once before the read; must outlive it.
    virtual ColdBytes* coldBytes() { return nullptr; }
};

}  // namespace allocscope::formats
