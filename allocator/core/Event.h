#pragma once
// One allocator decision, in PyTorch's trace vocabulary (TraceEntry::Action), plus what PyTorch
// does not record: the program op that caused it and *why* memory was released. Recording, the
// GUI and the tests all consume this one stream.
#include <cstdint>
#include <optional>
#include <string_view>

#include "allocator/core/PoolId.h"

namespace allocscope::alloc {

using StreamId = std::uint64_t;  // cudaStream_t as an integer; 0 is the default stream

enum class EventAction : std::uint8_t {
    Alloc,          // a block was carved for a request (size = requested bytes)
    FreeRequested,  // free() was called (allocation / allocated_bytes drop now)
    FreeCompleted,  // the block went back to its pool (active / requested drop now)
    SegmentAlloc,   // cudaMalloc of a whole segment
    SegmentFree,    // cudaFree of a whole segment
    SegmentMap,     // pages mapped into an expandable segment
    SegmentUnmap,   // pages unmapped from an expandable segment
    Oom,            // a request failed (address = device free bytes, size = rounded request)
    Snapshot,       // snapshot() was taken (size = active bytes)
};
inline constexpr int kEventActionCount = 9;

// Why an event happened. Program: the op asked for it directly. The others name the
// allocator's own reasons for giving memory back to the driver.
enum class EventCause : std::uint8_t {
    Program,
    Gc,               // garbage_collection_threshold released an old cached segment
    OversizeRelease,  // release_available_cached_blocks freed oversize segments (max_split_size)
    OomRetry,         // release_cached_blocks before the one retry of a failed cudaMalloc
    EmptyCache,       // an explicit empty_cache()
    // State PyTorch already had when the recorded history starts (a ring buffer that overflowed,
    // a state-only snapshot), rebuilt by restoreSegments: not a decision of the program or the
    // allocator at this point.
    Restored,
};
inline constexpr int kEventCauseCount = 6;

enum class PoolKind : std::uint8_t { Small, Large };

struct Event {
    std::uint64_t seq = 0;          // position in the run's event stream, from 0
    std::uint64_t opIndex = 0;      // index of the program op that caused this event
    std::uint64_t address = 0;      // block or segment address; for Oom: device free bytes
    std::uint64_t size = 0;         // PyTorch's trace size (requested bytes for alloc/free)
    std::uint64_t roundedSize = 0;  // block size for alloc/free; = size for segment events
    StreamId stream = 0;
    std::uint64_t segment = 0;      // address of the segment (or reservation) the event is in
    std::uint32_t stackId = 0;      // 0 = no stack; see StackTable
    EventAction action = EventAction::Alloc;
    EventCause cause = EventCause::Program;
    PoolKind pool = PoolKind::Large;
    // The segment's memory pool (PyTorch's segment_pool_id), set on segment events
    // (segment_alloc / segment_free / segment_map / segment_unmap): (0, 0) = the default pool,
    // else a private pool (a CUDA graph's, a MemPool). The views label segments with it; block
    // events leave it (0, 0) because a block's pool is its segment's. 16 bytes more per event;
    // a pool index would need a table beside every event consumer.
    PoolId poolId;
};

// "alloc", "free_requested", ... exactly as PyTorch's snapshot spells them.
std::string_view actionName(EventAction action);
std::optional<EventAction> actionFromName(std::string_view name);
// "program", "gc", "oversize_release", "oom_retry", "empty_cache", "restored".
std::string_view causeName(EventCause cause);
std::optional<EventCause> causeFromName(std::string_view name);
std::string_view poolName(PoolKind pool);  // "small" / "large"

}  // namespace allocscope::alloc
