#include "allocator/replay/PoolRouting.h"

namespace allocscope::alloc {

PoolRouting::PoolRouting(const RecordedTrace& trace) {
    if (!trace.finalSegments) return;
    for (const SegmentInfo& segment : *trace.finalSegments) {
        if (!segment.poolId.isDefault()) known_.push_back({segment.address, segment.totalSize, segment.poolId});
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
            if (address >= range.address && address - range.address < range.size) {
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

std::optional<PoolId> PoolRouting::knownPoolAt(std::uint64_t address) const {
    for (const KnownRange& range : known_) {
        if (address >= range.address && address - range.address < range.size) return range.pool;
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
