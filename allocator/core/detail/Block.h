#pragma once
// PyTorch's Block (one contiguous range inside a segment) and the segment it belongs to.
#include <cstdint>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/core/detail/FreeSet.h"

namespace allocscope::alloc::detail {

struct BlockPool;
struct Block;

// One cudaMalloc'd segment, or one expandable segment's whole virtual reservation. PyTorch has
// no segment object (a segment is the prev/next chain); we keep one so that events can name
// the containing segment in O(1) and snapshots can enumerate segments without a scan.
struct Segment {
    std::uint64_t address = 0;
    std::uint64_t size = 0;  // segment size, or reservation size for expandable segments
    StreamId stream = 0;
    BlockPool* pool = nullptr;
    Block* head = nullptr;  // the block at `address` (prev == nullptr)
    std::uint64_t pageSize = 0;     // expandable: mapping granularity
    std::uint64_t mappedBytes = 0;  // expandable: bytes currently mapped
    std::uint32_t stackId = 0;      // creation stack (snapshot "frames")
    std::uint32_t index = 0;        // position in the allocator's live-segment list
    bool expandable = false;

    void reset() { *this = Segment{}; }
};

struct Block {
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    std::uint64_t requestedSize = 0;  // last user size; stale once free, 0 if never used
    std::uint64_t gcCountBase = 0;    // pool clock when last inserted into the free set
    StreamId stream = 0;              // allocation stream (= the segment's)
    Block* prev = nullptr;
    Block* next = nullptr;
    Segment* segment = nullptr;
    BlockPool* pool = nullptr;
    std::vector<StreamId> streamUses;  // record_stream() streams other than `stream`
    std::uint32_t stackId = 0;
    std::uint32_t eventCount = 0;  // outstanding events of a pending free
    bool allocated = false;
    bool mapped = true;  // false only for unmapped ranges of expandable segments
    // Where the block sits in its pool's free set; valid only while it is there (BlockPool::insertFree).
    FreeSet::iterator freePos{};

    bool isSplit() const { return prev != nullptr || next != nullptr; }
    bool expandable() const { return segment->expandable; }
    // Free and not waiting for anything: may merge, may be reused.
    bool isAvailable() const { return !allocated && eventCount == 0 && streamUses.empty(); }
    void reset() {
        address = size = requestedSize = gcCountBase = 0;
        stream = 0;
        prev = next = nullptr;
        segment = nullptr;
        pool = nullptr;
        streamUses.clear();  // keeps capacity: recycled blocks do not reallocate
        stackId = eventCount = 0;
        allocated = false;
        mapped = true;
    }
};

inline FreeEntry::FreeEntry(Block* b)
    : stream(b->stream), key(sizeAddress(b->size, b->address)), block(b), expandable(b->segment->expandable) {}
inline bool BySize::operator()(const FreeEntry& a, const Block* b) const {
    return less(a.stream, a.key, b->stream, sizeAddress(b->size, b->address));
}
inline bool BySize::operator()(const Block* a, const FreeEntry& b) const {
    return less(a->stream, sizeAddress(a->size, a->address), b.stream, b.key);
}

}  // namespace allocscope::alloc::detail
