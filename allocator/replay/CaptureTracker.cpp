#include "allocator/replay/CaptureTracker.h"

#include <algorithm>
#include <string_view>

#include "allocator/replay/PoolRouting.h"

namespace allocscope::alloc {

bool CaptureTracker::startsCapture(std::size_t entry, std::uint32_t stackId, StreamId stream, bool inBegin, PoolId pool) {
    // A capture cannot run on the legacy default stream (0), so private-pool allocations that
    // begin on a side stream are a torch.cuda.graph capture (graph trees under torch.compile use
    // it too). Its __enter__ calls empty_cache() first; with nothing cached to release the trace
    // shows nothing of it, but PyTorch counts it (num_sync_all_streams). A capture whose
    // capture_begin allocated starts there, and its first private-pool allocation starts nothing.
    // A private-pool allocation on a stream no capture began on, into the pool of a capture open
    // on another stream, is that capture's fork (its stream waited on the capturing one): the
    // capture began where its capture_begin ran, and no empty_cache() comes with the fork.
    // A capture of its own on this stream into the other's pool (two_stream_captures: g2 on s2
    // with pool=g1.pool(), g1 captured on s1) looks the same until the other stream allocates
    // into the pool again, which only a capture still underway there can do.
    const bool fork = stream != 0 && !inBegin && !pool.isDefault() && !captureStreams_.contains(stream) &&
                      (forkStreams_.contains(stream) || (captureOpenElsewhere(stream, pool) && captureGoesOn(entry, stream, pool)));
    if (fork) forkStreams_.insert(stream);
    // Work on the legacy default stream while a capture is underway would invalidate it (that
    // stream synchronizes with every other), so an allocation there means the captures before it
    // ended: the next private-pool allocation on a capture stream, into the same pool as its last,
    // starts another capture (graphed_callables: each backward capture follows the empty_like of
    // its static grad outputs on the default stream). Not under torch.compile's graph trees: they
    // also run a function eagerly in its pool (warm-up), which is no capture.
    if (stream == 0) defaultStreamSince_.insert(captureStreams_.begin(), captureStreams_.end());
    const bool afterDefaultStream = !pool.isDefault() && defaultStreamSince_.erase(stream) > 0 && !graphTreesOf(stackId).inside;
    bool& begun = captureBegun_[stream];
    const auto [last, fresh] = lastPoolOnStream_.try_emplace(stream, pool);
    bool captureStarts = stream != 0 && !pool.isDefault() && (fresh || last->second != pool || afterDefaultStream) &&
                         !begun && !fork && !forkStreams_.contains(stream);
    last->second = pool;
    if (inBegin) {
        captureStarts = !begun;
        begun = true;
    } else if (!pool.isDefault()) {
        begun = false;
    }
    if (inBegin || captureStarts) captureStreams_.insert(stream);
    // (A default-pool allocation starts a capture only in capture_begin.)
    if (pool.isDefault()) return captureStarts;
    // torch.compile's graph trees warm a function up in the pool without a capture, then record
    // it in the same pool on the same stream: the rule above cannot see that capture start, the
    // Python stack can (CUDAGraphNode._record runs the function inside torch.cuda.graph).
    const bool recording = graphTreesOf(stackId).recording;
    bool& wasRecording = recordingOnStream_[stream];
    const bool recordingStarts = recording && !wasRecording;
    wasRecording = recording;
    return captureStarts || recordingStarts;
}

// The pool a capture underway on `stream` routes an allocation to, for an allocation whose pool
// no address tells. c10's get_pool routes every request made on a capturing stream to the
// capture's private pool (captures_underway: the pool id and a filter that matches the capturing
// stream), and a capture cannot run on the legacy default stream. torch.cuda.graph captures on a
// stream of its own (graphs.py: default_capture_stream), used for nothing but its captures: once a
// side stream's allocation came from a private pool, or its capture_begin allocated, the next ones
// on it are taken to come from the capture's pool (a guess still, which the inference can flip).
// One capture allocates from one pool: where the snapshot's final segments name the pool of a
// later allocation on the same stream, that pool is the guess (else the inferred pool).
std::optional<PoolId> CaptureTracker::prior(std::size_t entry, StreamId stream, const PoolRouting& routing) const {
    if (stream == 0) return std::nullopt;
    auto last = lastPoolOnStream_.find(stream);
    const bool privateBefore = last != lastPoolOnStream_.end() && !last->second.isDefault();
    // A fork stream also runs eager work (capture_fork: eager allocations on it between
    // replays), so what it allocated before says nothing of this request: only a later
    // allocation the snapshot places does. A stream no capture began on that allocates while a
    // capture is open elsewhere is either that capture's fork or a capture of its own sharing the
    // open one's pool (g2 on s2 with pool=g1.pool(), g1 on s1): either way the open capture's
    // pool, where no later allocation tells otherwise (a capture with a pool of its own is found
    // by the inference flipping to a new pool).
    if (!captureStreams_.contains(stream) && forkStreams_.contains(stream)) return knownPoolLater(entry, stream, routing);
    if (!captureStreams_.contains(stream) && captureOpenElsewhere(stream, std::nullopt)) {
        if (std::optional<PoolId> known = knownPoolLater(entry, stream, routing)) return known;
        return openCapturePool(stream);
    }
    // The default stream allocated since this stream's last private-pool allocation: that
    // capture ended, and the stream may run eager work now (two_stream_captures: eager work on
    // s2 between replays of the graphs captured on it). A later allocation the snapshot places
    // says which; without one, another capture into the same pool is taken (graphed_callables).
    if (privateBefore && defaultStreamSince_.contains(stream)) {
        if (std::optional<PoolId> known = knownPoolLater(entry, stream, routing)) return known;
    }
    if (privateBefore && last->second != kInferredPool) return last->second;
    auto begun = captureBegun_.find(stream);
    if (!privateBefore && (begun == captureBegun_.end() || !begun->second)) return std::nullopt;
    return knownPoolLater(entry, stream, routing).value_or(kInferredPool);
}

// Entries come in order within a run, so each stream's scan resumes where the last one stopped:
// a side stream's eager allocations while a capture is open would otherwise each scan the whole
// window (none of them in a private pool), which on a long trace is quadratic.
std::optional<PoolId> CaptureTracker::knownPoolLater(std::size_t entry, StreamId stream, const PoolRouting& routing) const {
    const std::size_t end = std::min<std::size_t>(trace_.entries.size(), entry + kLookAhead);
    LaterScan& scan = laterScans_[stream];
    if (scan.found && *scan.found > entry) return *scan.found < end ? std::optional<PoolId>(scan.pool) : std::nullopt;
    // Nothing on this stream up to scannedTo had a known pool (past a found one nothing was read).
    const std::size_t from = scan.found ? entry + 1 : std::max(entry + 1, scan.scannedTo);
    scan.found.reset();
    for (std::size_t i = from; i < end; ++i) {
        const RecordedEntry& later = trace_.entries[i];
        if (later.action != EventAction::Alloc || trace_.stream(later) != stream) continue;
        if (std::optional<PoolId> known = routing.knownPoolAt(i, later.address)) {
            scan.found = i;
            scan.pool = *known;
            return known;
        }
    }
    scan.scannedTo = std::max(scan.scannedTo, end);
    return std::nullopt;
}

bool CaptureTracker::captureGoesOn(std::size_t entry, StreamId stream, PoolId pool) const {
    const std::size_t end = std::min<std::size_t>(trace_.entries.size(), entry + kLookAhead);
    for (std::size_t i = entry + 1; i < end; ++i) {
        const RecordedEntry& later = trace_.entries[i];
        if (later.action != EventAction::Alloc) continue;
        const StreamId on = trace_.stream(later);
        if (on == 0) return false;  // the default stream: every capture before it ended
        if (on == stream || !captureStreams_.contains(on)) continue;
        auto last = lastPoolOnStream_.find(on);
        auto begun = captureBegun_.find(on);
        if ((last != lastPoolOnStream_.end() && last->second == pool) || (begun != captureBegun_.end() && begun->second)) return true;
    }
    return false;
}

std::optional<PoolId> CaptureTracker::openCapturePool(StreamId stream) const {
    for (const StreamId other : captureStreams_) {
        if (other == stream || defaultStreamSince_.contains(other)) continue;
        auto last = lastPoolOnStream_.find(other);
        if (last != lastPoolOnStream_.end() && !last->second.isDefault()) return last->second;
    }
    return std::nullopt;
}

bool CaptureTracker::captureOpenElsewhere(StreamId stream, std::optional<PoolId> pool) const {
    for (const StreamId other : captureStreams_) {
        if (other == stream || defaultStreamSince_.contains(other)) continue;
        auto begun = captureBegun_.find(other);
        if (begun != captureBegun_.end() && begun->second) return true;
        auto last = lastPoolOnStream_.find(other);
        if (last != lastPoolOnStream_.end() && !last->second.isDefault() && (!pool || last->second == *pool)) return true;
    }
    return false;
}

bool CaptureTracker::inCaptureBegin(std::uint32_t stackId) const { return PoolRouting::inCaptureBegin(trace_.stacks, stackId); }

CaptureTracker::GraphTrees CaptureTracker::graphTreesOf(std::uint32_t stackId) {
    if (stackId == 0) return {};
    auto [it, fresh] = graphTreesStacks_.try_emplace(stackId);
    if (!fresh) return it->second;
    for (const Frame& frame : trace_.stacks.stack(stackId)) {
        if (!std::string_view(frame.filename).ends_with("cudagraph_trees.py")) continue;
        it->second.inside = true;
        if (frame.name == "_record") it->second.recording = true;
    }
    return it->second;
}

}  // namespace allocscope::alloc
