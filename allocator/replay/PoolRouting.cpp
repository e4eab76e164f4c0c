#include "allocator/replay/PoolRouting.h"

namespace allocscope::alloc {

PoolRouting::PoolRouting(const RecordedTrace& trace) {
    if (!trace.finalSegments) return;
    for (const SegmentInfo& segment : *trace.finalSegments) {
        if (!segment.poolId.isDefault()) known_.push_back({segment.address, segment.totalSize, segment.poolId});
    }
    if (known_.empty()) return;
    // A final segment tells the pool of what was allocated in it only since it was created: the
    // same addresses may have held another pool's segment before, cudaFree'd (release_block) and
    // handed out again by the driver (compile_gpt2: an optimizer's 2 MiB default-pool segment,
    // freed by the graph trees' empty_cache(), came back as the graph pool's).
    for (std::size_t i = 0; i < trace.entries.size(); ++i) {
        const RecordedEntry& e = trace.entries[i];
        if (e.action != EventAction::SegmentFree) continue;
        for (KnownRange& range : known_) {
            if (e.address < range.address + range.size && range.address < e.address + e.size) range.since = i + 1;
        }
    }
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
            if (entry >= range.since && address >= range.address && address - range.address < range.size) {
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
    if (!pool.isDefault()) used_[entry] = pool;
    return pool;
}

std::optional<PoolId> PoolRouting::knownPoolAt(std::size_t entry, std::uint64_t address) const {
    for (const KnownRange& range : known_) {
        if (entry >= range.since && address >= range.address && address - range.address < range.size) return range.pool;
    }
    return std::nullopt;
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
