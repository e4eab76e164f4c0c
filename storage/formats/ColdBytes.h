#pragma once
// Where the pickle memo keeps its frozen chunks (PickleMemo, issue #18): an append-only run of
// bytes, read back at random by offset.
//
// Why an interface: the memo of a big snapshot still grows with the file (one or two bytes per
// slot, two slots per trace entry: ~114 MB for 5 GB, ~1 GB for 50 GB), so the streaming import
// keeps it in a temporary file (storage/import's SpilledColdBytes, over the allocator's
// SpillArray). allocscope_formats is standard library only, so it defines what it needs and keeps
// its own in-memory default (MemoryColdBytes); the importer hands a file-backed one down the sink
// chain (SnapshotEntrySink::coldBytes, TraceBatchSink::coldBytes).
//
// Bytes are never changed once appended. data() may move on append() (a vector grows, a mapping
// moves past its reserved address space): callers keep offsets and take data() again after each
// append().
#include <cstddef>
#include <cstdint>

namespace allocscope::formats {

class ColdBytes {
public:
    virtual ~ColdBytes() = default;
    // Appends `n` bytes and returns the offset of the first. May throw (std::runtime_error: no
    // room for them on disk; std::bad_alloc): the read that uses the store then stops with it.
    virtual uint64_t append(const uint8_t* bytes, std::size_t n) = 0;
    // Byte 0; valid until the next append().
    virtual const uint8_t* data() const = 0;
    virtual uint64_t size() const = 0;
    // The pages read since the last trim() need not stay in memory (they stay readable, and the
    // ones read again come back). For a file-backed store: its mapped pages are released.
    virtual void trim() {}
    // Bytes the store holds in the process's own memory (heap). A file-backed store counts none
    // of its file: the few pages of it mapped at a time are page cache, given back by trim().
    virtual std::size_t heapBytes() const = 0;
};

}  // namespace allocscope::formats
