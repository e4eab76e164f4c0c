#include "allocator/replay/PoolRouting.h"

#include <algorithm>
#include <string_view>

namespace allocscope::alloc {

PoolRouting::PoolRouting(const RecordedTrace& trace) {
    // A default-pool final segment says as much for what was allocated in it (graph_stream_pools:
    // eager work on a capture stream between captures), but only the private ones guide a
    // capture's prior (knownPoolAt).
    std::size_t finalRanges = 0;
    if (trace.finalSegments) {
        for (const bool privatePools : {true, false}) {
            for (const SegmentInfo& segment : *trace.finalSegments) {
                if (segment.poolId.isDefault() != privatePools) known_.push_back({segment.address, segment.totalSize, segment.poolId});
            }
            if (privatePools) privateRanges_ = known_.size();
        }
        finalRanges = known_.size();
    }
    const std::size_t finalPrivate = privateRanges_;
    addOwnerReleases(trace);
    privateRanges_ += known_.size() - finalRanges;
    // A trace whose stacks show a torch.cuda.graph capture_begin has private pools even when none
    // survived to the end (two_stream_captures: every graph deleted, then empty_cache()): its
    // default-pool final segments still tell the eager work on a capture stream from a capture's.
    // (Looked for only when no final segment is private.)
    bool captures = false;
    for (std::uint32_t id = 1; finalPrivate == 0 && id < trace.stacks.size() && !captures; ++id) {
        captures = inCaptureBegin(trace.stacks, id);
    }
    if (finalPrivate == 0 && !captures) {
        // No private pool in the final segments: nothing is routed by them, not even the default.
        known_.erase(known_.begin(), known_.begin() + static_cast<std::ptrdiff_t>(finalRanges));
        return;
    }
    // A final segment tells the pool of what was allocated in it only since it was created: the
    // same addresses may have held another pool's segment before, cudaFree'd (release_block) and
    // handed out again by the driver (compile_gpt2: an optimizer's 2 MiB default-pool segment,
    // freed by the graph trees' empty_cache(), came back as the graph pool's).
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
        const RecordedEntry& e = trace.entries[i];
        if (e.action != EventAction::SegmentFree) continue;
        for (std::size_t r = 0; r < finalRanges; ++r) {
            KnownRange& range = known_[r];
            if (e.address < range.address + range.size && range.address < e.address + e.size) range.since = i + 1;
        }
    }
    joinOwnersToFinalPools(trace, finalRanges);
}

// A MemPool's destructor releases its pool's free segments; its live ones survive and the final
// segments name the pool (graph_in_mempool: a capture into pool=MemPool().id keeps cuBLAS's
// workspace there). A released segment that a capture made sits among that capture's other
// allocations on its stream, which all go to the capture's one pool: where the allocation next to
// its creation on that stream lies in a final segment of a MemPool, the destructor's run of
// releases was that pool's, not a pool of its own. (Stream 0 says nothing: use_mem_pool scopes
// route every stream, and nested scopes sit side by side there.)
void PoolRouting::joinOwnersToFinalPools(const RecordedTrace& trace, std::size_t finalRanges) {
    auto finalPoolAt = [&](std::size_t entry, std::uint64_t address) -> std::optional<PoolId> {
        for (std::size_t r = 0; r < finalRanges; ++r) {
            const KnownRange& range = known_[r];
            if (range.pool.first == 0 && !range.pool.isDefault() && range.covers(entry, address)) return range.pool;
        }
        return std::nullopt;
    };
    constexpr std::size_t kWindow = 4096;
    std::map<PoolId, std::optional<PoolId>> joined;  // an owner run's pool -> the final pool it is
    for (std::size_t r = finalRanges; r < known_.size(); ++r) {
        const KnownRange& range = known_[r];
        const std::size_t until = std::min(range.until, trace.entries.size());
        std::size_t made = until;
        for (std::size_t i = range.since; i < until; ++i) {
            const RecordedEntry& e = trace.entries[i];
            if ((e.action == EventAction::SegmentAlloc || e.action == EventAction::SegmentMap) && e.address == range.address) {
                made = i;
                break;
            }
        }
        if (made == until) continue;
        const StreamId stream = trace.stream(trace.entries[made]);
        if (stream == 0) continue;
        std::optional<PoolId> found;
        auto look = [&](std::size_t i) {
            const RecordedEntry& e = trace.entries[i];
            if (e.action != EventAction::Alloc || trace.stream(e) != stream) return false;
            if (e.address >= range.address && e.address - range.address < range.size) return false;
            found = finalPoolAt(i, e.address);
            return true;  // the nearest allocation on the stream decides, found or not
        };
        for (std::size_t i = made; i-- > (made > kWindow ? made - kWindow : 0);) {
            if (look(i)) break;
        }
        if (!found) {
            for (std::size_t i = made + 1; i < std::min(until, made + kWindow); ++i) {
                if (look(i)) break;
            }
        }
        if (!found) continue;
        auto [it, fresh] = joined.try_emplace(range.pool, found);
        if (!fresh && it->second != found) it->second = PoolId{};  // disagreeing evidence: keep the run's own
    }
    for (KnownRange& range : known_) {
        auto it = joined.find(range.pool);
        if (it != joined.end() && it->second && !it->second->isDefault()) range.pool = *it->second;
    }
}

// mempool_twice (tests/data/pools-heldout2): a MemPool whose segments are all gone by the end, so
// no final segment names its pool; its destructor's releases still say which segments were its.
// Such a range is the pool's from the first entry after the last release over it (the segment's
// creation, or the first map of an expandable range) to the owner's release. The pool id is not
// in the trace: an inferred id stands for it. One destructor releases its pool's segments in one
// run of releases; releases with program events between them are other destructors' (mempool_nested:
// the inner pool deleted first, the outer later), and each run gets an inferred pool of its own.
void PoolRouting::addOwnerReleases(const RecordedTrace& trace) {
    if (trace.stacks.size() <= 1) return;  // no stacks: no pass over a big trace's entries
    std::uint64_t owners = 0;
    std::optional<std::size_t> previous;  // the last owner release
    PoolId pool = kInferredPool;
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
        const RecordedEntry& e = trace.entries[i];
        if ((e.action != EventAction::SegmentFree && e.action != EventAction::SegmentUnmap) || !releasedByPoolOwner(trace, i)) {
            continue;
        }
        bool sameRun = previous.has_value();
        for (std::size_t j = previous.value_or(i) + 1; sameRun && j < i; ++j) {
            const EventAction a = trace.entries[j].action;
            sameRun = a == EventAction::SegmentFree || a == EventAction::SegmentUnmap;
        }
        if (previous && !sameRun) pool = inferredMemPool(++owners);
        previous = i;
        std::size_t since = 0;
        for (std::size_t j = i; j-- > 0;) {
            const RecordedEntry& before = trace.entries[j];
            const bool release = before.action == EventAction::SegmentFree || before.action == EventAction::SegmentUnmap;
            if (release && before.address < e.address + e.size && e.address < before.address + before.size) {
                since = j + 1;
                break;
            }
        }
        known_.push_back({e.address, e.size, pool, since, i});
    }
}

std::optional<bool> PoolRouting::inEmptyCacheCall(const StackTable& stacks, std::uint32_t stackId) {
    if (stackId == 0) return std::nullopt;
    for (const Frame& frame : stacks.stack(stackId)) {
        // Recorders that shorten every frame's file name to its base name leave "memory.py".
        const std::string_view file = frame.filename;
        if (frame.name == "empty_cache" && (file.ends_with("cuda/memory.py") || file == "memory.py")) return true;
    }
    return false;
}

bool PoolRouting::inCaptureBegin(const StackTable& stacks, std::uint32_t stackId) {
    if (stackId == 0) return false;
    const Stack& frames = stacks.stack(stackId);
    return std::any_of(frames.begin(), frames.end(), [](const Frame& f) {
        return f.name == "capture_begin" && std::string_view(f.filename).ends_with("graphs.py");
    });
}

bool PoolRouting::releasedByPoolOwner(const RecordedTrace& trace, std::size_t entry) {
    const std::uint32_t stack = trace.entries[entry].stackId;
    if (inEmptyCacheCall(trace.stacks, stack) != false) return false;
    // Only a Python stack can say that no torch.cuda.empty_cache() made the release (stacks="cpp").
    const Stack& frames = trace.stacks.stack(stack);
    const bool python = std::any_of(frames.begin(), frames.end(), [](const Frame& f) { return std::string_view(f.filename).ends_with(".py"); });
    if (!python) return false;
    // PyTorch stamps a release with the releasing call's stack. A pickle AllocScope exported from
    // a session carries the segment's own allocation stack on its releases instead (the session
    // keeps one stack per segment event), so a release with the stack its segment was made with
    // says nothing about who released it (frag101's empty_cache() releases after a round trip).
    const RecordedEntry& released = trace.entries[entry];
    for (std::size_t j = entry; j-- > 0;) {
        const RecordedEntry& before = trace.entries[j];
        const bool made = before.action == EventAction::SegmentAlloc || before.action == EventAction::SegmentMap;
        if (made && before.address < released.address + released.size && released.address < before.address + before.size) {
            if (before.stackId == stack) return false;
            break;
        }
    }
    for (std::size_t i = entry + 1; i < trace.entries.size(); ++i) {
        const RecordedEntry& next = trace.entries[i];
        const bool segmentEvent = next.action == EventAction::SegmentFree || next.action == EventAction::SegmentUnmap ||
                                  next.action == EventAction::SegmentAlloc || next.action == EventAction::SegmentMap;
        if (segmentEvent) continue;
        if (next.action != EventAction::Alloc && next.action != EventAction::Oom) return true;
        return next.stackId != 0 && next.stackId != stack;
    }
    return true;
}

PoolRouting::PoolRouting(std::map<std::size_t, PoolId> fixed) : forced_(std::move(fixed)), fixed_(true) {}

PoolId PoolRouting::poolFor(std::size_t entry, std::uint64_t address, const CachingAllocator& allocator,
                            bool& guessed, std::optional<PoolId> prior) const {
    guessed = false;
    PoolId pool;
    if (fixed_) {
        if (auto it = forced_.find(entry); it != forced_.end()) pool = it->second;
    } else if (std::optional<PoolId> live = allocator.poolOfAddress(address)) {
        pool = *live;
    } else if (auto it = forced_.find(entry); it != forced_.end()) {
        pool = it->second;
    } else {
        bool found = false;
        for (const KnownRange& range : known_) {
            if (range.covers(entry, address)) {
                pool = range.pool;
                found = true;
                break;
            }
        }
        guessed = !found;
        if (guessed && prior && !prior->isDefault()) {
            pool = *prior;
            privateGuess_.insert(entry);
        }
    }
    if (prior && !fixed_) priorLog_.push_back({entry, *prior, guessed});
    if (!pool.isDefault()) used_[entry] = pool;
    return pool;
}

std::optional<PoolId> PoolRouting::knownPoolAt(std::size_t entry, std::uint64_t address) const {
    for (const KnownRange& range : known_) {
        if (!range.pool.isDefault() && range.covers(entry, address)) return range.pool;
    }
    return std::nullopt;
}

bool PoolRouting::flipToNewPool(std::size_t entry, std::size_t earlier) {
    if (fixed_ || privateGuess_.count(entry) == 0 || flipped_.count(entry) > 0) return false;
    const auto at = std::find_if(priorLog_.rbegin(), priorLog_.rend(), [entry](const PriorUse& use) { return use.entry == entry; });
    if (at == priorLog_.rend()) return false;
    const PoolId prior = at->prior;
    auto end = at;
    for (std::size_t taken = 0; taken <= earlier; ++taken, ++end) {
        if (end == priorLog_.rend() || end->prior != prior || !end->guessed) return false;
    }
    flipped_.insert(entry);
    // Graph-shaped ids past any PyTorch hands out, one per capture the inference found.
    const PoolId fresh = inferredCapturePool(entry);
    for (auto it = at; it != end; ++it) forced_[it->entry] = fresh;
    return true;
}

bool PoolRouting::flip(std::size_t entry) {
    if (fixed_ || !flipped_.insert(entry).second) return false;
    auto it = forced_.find(entry);
    if (it == forced_.end()) {
        forced_[entry] = privateGuess_.count(entry) > 0 ? PoolId{} : kInferredPool;
    } else {
        forced_.erase(it);
    }
    return true;
}

}  // namespace allocscope::alloc
