#pragma once
// The caching allocator of one device, with PyTorch 2.11's decisions (see
// ../shared/reference/pytorch-allocator-2.11.md): size rounding, small/large pools per stream,
// best fit ordered by (stream, size, address), split and merge, oversize blocks, garbage
// collection, the fraction cap, release-and-retry, expandable segments, pending frees.
// Every decision is sent to the EventSink as one Event.
//
// Not thread-safe: one caller at a time (PyTorch serialises with one mutex per device).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/BestFitTie.h"
#include "allocator/core/DeviceMemory.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/PoolId.h"
#include "allocator/core/SegmentInfo.h"

namespace allocscope::alloc {

// Constants of PyTorch's allocator (c10/core/AllocatorConfig.h).
inline constexpr std::uint64_t kMinBlockSize = 512;
inline constexpr std::uint64_t kSmallSize = 1 * kMiB;      // <= this: small pool
inline constexpr std::uint64_t kSmallBuffer = 2 * kMiB;    // small-pool segment / page
inline constexpr std::uint64_t kMinLargeAlloc = 10 * kMiB;
inline constexpr std::uint64_t kRoundLarge = 2 * kMiB;

// What the last failed malloc() knew: the pieces of PyTorch's OutOfMemoryError.
struct OomInfo {
    std::uint64_t requestedSize = 0;  // the user's size
    std::uint64_t roundedSize = 0;    // round_size(requested): the oom trace entry's size
    std::uint64_t allocSize = 0;      // the segment that could not be obtained ("Tried to allocate")
    std::uint64_t deviceFree = 0;
    std::uint64_t deviceTotal = 0;
    std::string message;              // PyTorch's text, exactly
};

// torch.cuda.MemPool's options (reference §12).
struct PrivatePoolOptions {
    bool useOnOom = false;  // searched for a free block before an OOM of a default-pool request
    bool noSplit = false;   // blocks of this pool are never split
};

class CachingAllocator {
public:
    // `device` and `sink` must outlive the allocator; `sink` may be null.
    CachingAllocator(const AllocatorConfig& config, DeviceMemory& device, EventSink* sink = nullptr);
    ~CachingAllocator();
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    // The op index stamped on the events that follow (the caller's current program op).
    void setOpIndex(std::uint64_t opIndex);
    // Told of every best-fit decision between equal free blocks of different segments (see
    // BestFitTie.h); empty (the default) costs nothing. Replays use it to say which decisions
    // rest on modelled addresses.
    void setBestFitTieObserver(BestFitTieObserver observer);

    // torch's caching malloc. Returns the block address, or nullopt after an OOM (lastOom()).
    // size 0 never reaches PyTorch's allocator: it returns nullopt without any effect.
    std::optional<std::uint64_t> malloc(std::uint64_t size, StreamId stream, std::uint32_t stackId = 0);
    // free(): free_requested now; free_completed now unless the block has stream uses, in
    // which case it stays pending until completePendingFree() or a synchronising call.
    // Returns false for an unknown address (PyTorch: "invalid device pointer").
    bool free(std::uint64_t address);
    // record_stream(): the block is also used on `stream` (ignored for its own stream).
    bool recordStream(std::uint64_t address, StreamId stream);
    // The events guarding a pending free have completed: the block returns to its pool now.
    bool completePendingFree(std::uint64_t address);
    // Every pending free's events are complete (cudaDeviceSynchronize + process_events).
    void synchronize();
    // torch.cuda.empty_cache(): complete pending frees, release every whole free segment (and
    // free pages of expandable segments).
    void emptyCache();
    // torch.cuda.empty_cache's per-pool form, emptyCache(mempool_id), which MemPool's destructor
    // calls after releasePool: only when that pool is freeable (no uses left), complete its
    // pending frees (a device-wide sync: num_sync_all_streams counts it) and release its whole
    // free segments; the pool goes once it owns none. The default id is emptyCache().
    void emptyCache(PoolId pool);
    // torch.cuda.set_per_process_memory_fraction(f): cap = f * totalMemory, removed at f >= 1.
    void setMemoryFraction(double fraction);
    void resetPeakStats();
    void resetAccumulatedStats();

    // ---- private pools (reference §12; c10's createOrIncrefPool, beginAllocateToPool,
    // endAllocateToPool, releasePool) ----
    // torch.cuda.MemPool() / a graph's pool: creates the pool with one use, or adds a use.
    void createPool(PoolId id, PrivatePoolOptions options = {});
    // From now on, allocations on `stream` (a CUDA graph capture on that stream) or on every
    // stream (nullopt: torch.cuda.use_mem_pool, which PyTorch filters by thread) come from the
    // pool, newest routing first. Creates the pool with one use if it does not exist. `capture`:
    // a CUDA graph capture is underway (event queries are illegal: pending frees are deferred).
    void beginAllocateToPool(PoolId id, std::optional<StreamId> stream, bool capture);
    // Stops the newest routing to `id`. Returns false if none is active.
    bool endAllocateToPool(PoolId id);
    // The pool's owner is gone (CUDAGraph reset, MemPool destroyed): one use less. At zero the
    // pool is freeable: empty_cache() may then cudaFree its whole free segments, and the pool
    // is deleted once it owns none. Returns false for an unknown pool.
    bool releasePool(PoolId id);

    // The pool of the live segment (or expandable reservation) that contains `address`; nullopt
    // when no live segment does. Linear in the number of segments (replays use it to tell which
    // pool a recorded allocation came from).
    std::optional<PoolId> poolOfAddress(std::uint64_t address) const;

    // Rebuilds a state PyTorch had, from a snapshot's segments (the history of a ring buffer
    // that overflowed starts mid-run): every segment, block and state exactly as given, with
    // the statistics' `current` values (and peaks) that state implies. Only on a fresh
    // allocator. Emits segment_alloc / segment_map and alloc events (and free_requested for
    // pending frees) so that event consumers see the same state.
    void restoreSegments(const std::vector<SegmentInfo>& segments);

    const DeviceStats& stats() const;
    const AllocatorConfig& config() const;
    DeviceMemory& device() const;
    const OomInfo& lastOom() const;
    std::uint64_t roundSize(std::uint64_t size) const;  // round_size()

    // PyTorch's snapshot "segments" (sorted by address). Emits a Snapshot event.
    std::vector<SegmentInfo> snapshot();
    // The same without emitting an event (inspection, tests).
    std::vector<SegmentInfo> segments() const;
    // torch.cuda.memory_summary(device, abbreviated) for this allocator, character for character.
    std::string memorySummary(int deviceId = 0, bool abbreviated = false) const;

    // True while `address` is a freed block waiting for its stream uses (active_pending_free).
    bool isPendingFree(std::uint64_t address) const;
    // Human-readable dump of every segment and block, pools and free sets (debugging).
    std::string debugDump() const;

    class Impl;
    // Read-only access to the internals (InvariantChecker, debugging tools).
    const Impl& impl() const { return *impl_; }

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace allocscope::alloc
