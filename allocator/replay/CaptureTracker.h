#pragma once
// The CUDA graph captures a trace shows, and the private pool a capture routes an allocation to
// when no address places it. PyTorch's trace records neither a capture's start nor its end, nor
// an allocation's pool: only each entry's stream and Python stack, and (PoolRouting) the pools
// the snapshot's final segments and a MemPool's releases name. ReplayRun asks, per allocation,
// for the pool a capture would route it to (prior) and, once the allocation's pool is decided,
// whether a capture starts with it (startsCapture: torch.cuda.graph's __enter__ called
// empty_cache() before it, a device-wide sync PyTorch counts in num_sync_all_streams).
//
// The rules, each from PyTorch 2.11 (torch/cuda/graphs.py, CUDACachingAllocator's
// captures_underway) and a recording that showed it (tests/data/pools-heldout*):
//   - a capture cannot run on the legacy default stream (0); a private-pool allocation that
//     begins on a side stream starts a capture, as does an allocation in capture_begin;
//   - a stream that waited on a capturing one joins its capture (a fork): its allocations go to
//     the capture's pool and start nothing, and its eager work after the capture is its own;
//   - an allocation on the default stream ends every capture (it synchronizes with all streams);
//   - torch.compile's graph trees warm up in the pool without a capture; their recording
//     (CUDAGraphNode._record) starts one.
// Entries are asked about in trace order within one run.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "allocator/core/CachingAllocator.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

class PoolRouting;

class CaptureTracker {
public:
    explicit CaptureTracker(const RecordedTrace& trace) : trace_(trace) {}

    // The allocation's Python stack runs inside torch.cuda.graph's capture_begin.
    bool inCaptureBegin(std::uint32_t stackId) const;
    // The pool a capture underway on `stream` gives the allocation at `entry` (nullopt: none).
    std::optional<PoolId> prior(std::size_t entry, StreamId stream, const PoolRouting& routing) const;
    // The allocation at `entry` came from `pool`: records it, and says whether a capture starts
    // with it (`inBegin`: its stack is in capture_begin).
    bool startsCapture(std::size_t entry, std::uint32_t stackId, StreamId stream, bool inBegin, PoolId pool);

private:
    // The first later allocation on `stream` whose pool the snapshot tells (within a window).
    std::optional<PoolId> knownPoolLater(std::size_t entry, StreamId stream, const PoolRouting& routing) const;
    // A capture is open on another stream: it began there and has allocated into `pool` since
    // (any pool when unset), or its capture_begin allocated and nothing since; and the default
    // stream has not allocated since (no capture spans that).
    bool captureOpenElsewhere(StreamId stream, std::optional<PoolId> pool) const;
    // The private pool of a capture open on another stream than `stream`, if one is.
    std::optional<PoolId> openCapturePool(StreamId stream) const;
    // After `entry`, a capture stream other than `stream` that allocated into `pool` (or whose
    // capture_begin just ran) allocates again before the default stream does.
    bool captureGoesOn(std::size_t entry, StreamId stream, PoolId pool) const;
    // Where an allocation's Python stack runs in torch.compile's graph trees: inside them at all
    // (warm-up or capture), and inside the capture of a function (CUDAGraphNode._record).
    struct GraphTrees {
        bool inside = false;
        bool recording = false;
    };
    GraphTrees graphTreesOf(std::uint32_t stackId);
    // How far ahead knownPoolLater and captureGoesOn look for a later allocation.
    static constexpr std::size_t kLookAhead = 4096;

    const RecordedTrace& trace_;
    // The pool of the last allocation on each stream: a private pool's allocations starting on a
    // side stream mark a CUDA graph capture (torch.cuda.graph calls empty_cache() before it).
    std::map<StreamId, PoolId> lastPoolOnStream_;
    std::map<StreamId, bool> captureBegun_;  // capture_begin allocated, no capture alloc yet
    // Streams a capture began on, and streams a capture forked to (capture_fork: a stream made to
    // wait on the capturing one joins its capture, and its requests go to the capture's pool).
    std::set<StreamId> captureStreams_;
    std::set<StreamId> forkStreams_;
    // Capture streams the legacy default stream allocated on since their last private-pool
    // allocation: no capture can be underway across that.
    std::set<StreamId> defaultStreamSince_;
    struct LaterScan {
        std::size_t scannedTo = 0;         // entries before this were read (with no `found` pending)
        std::optional<std::size_t> found;  // the next allocation with a known pool, not yet passed
        PoolId pool;
    };
    mutable std::map<StreamId, LaterScan> laterScans_;  // knownPoolLater's progress, by stream
    std::map<StreamId, bool> recordingOnStream_;         // the last private-pool alloc was recorded
    std::map<std::uint32_t, GraphTrees> graphTreesStacks_;  // graphTreesOf, by stack id
};

}  // namespace allocscope::alloc
