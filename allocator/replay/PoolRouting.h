#pragma once
// Which memory pool each recorded allocation came from. PyTorch's traces do not say: an entry
// has an address but no pool id, and only the snapshot's final `segments` carry
// `segment_pool_id`. A replay with the recorded addresses can still tell, step by step:
//
//   1. the allocation lies in a live segment: it came from that segment's pool;
//   2. it lies in a segment created for it in this step: the pool that the final snapshot gives
//      that segment, when the segment survived to the end;
//      Likewise a segment that a MemPool's destructor released (releasedByPoolOwner) was a
//      private pool's from its creation to that release;
//   3. otherwise nothing is known: the default pool is *guessed*, and the replay remembers which
//      segments rest on a guess. When the replay later leaves the recording because of such a
//      segment (the best fit took a block the recording never used, or empty_cache() released it
//      among the default pool's segments although PyTorch released it later, with a freeable
//      private pool), the guess is flipped to a private pool and the replay runs again.
//
// A replay under another config (what-if) has no recorded addresses: it takes the pools the exact
// replay found, by trace entry (assignments()).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

// The id given to a private pool that only the replay's inference saw (its real id is not in the
// snapshot): MemPool-shaped, far from the small ids PyTorch hands out.
inline constexpr PoolId kInferredPool{0, 0x1'0000'0000ull};

// The ids the inference makes, all at least kInferredPool's second half in one of their halves
// (PyTorch's own ids are small counters): MemPool-shaped (0, kInferredPool.second + n) for the
// n-th MemPool destructor's run of releases (n = 0: kInferredPool itself), graph-shaped
// (kInferredPool.second + 1 + entry, 0) for a capture found to start a pool of its own at `entry`
// (PoolRouting::flipToNewPool). Made and read only through these, so the views need not know how.
inline constexpr PoolId inferredMemPool(std::uint64_t n) { return {0, kInferredPool.second + n}; }
inline constexpr PoolId inferredCapturePool(std::size_t entry) { return {kInferredPool.second + 1 + entry, 0}; }
inline constexpr bool isInferredPool(PoolId id) {
    return id.first >= kInferredPool.second || id.second >= kInferredPool.second;
}
// n of an inferredMemPool(n), entry of an inferredCapturePool(entry); nullopt for other ids.
inline constexpr std::optional<std::uint64_t> inferredMemPoolNumber(PoolId id) {
    if (id.first != 0 || id.second < kInferredPool.second) return std::nullopt;
    return id.second - kInferredPool.second;
}
inline constexpr std::optional<std::size_t> inferredCaptureEntry(PoolId id) {
    if (id.second != 0 || id.first <= kInferredPool.second) return std::nullopt;
    return static_cast<std::size_t>(id.first - kInferredPool.second - 1);
}

class PoolRouting {
public:
    explicit PoolRouting(const RecordedTrace& trace);
    // Fixed assignments (a what-if takes the exact replay's): no inference at all.
    explicit PoolRouting(std::map<std::size_t, PoolId> fixed);

    // The trace's final segments (or a MemPool's releases) name a private pool: route from the start.
    bool knownPrivatePools() const { return privateRanges_ > 0; }

    // The private pool the trace's final segments give an allocation at `address` recorded at
    // trace entry `entry`, if any (none before the last cudaFree of a segment at that range).
    std::optional<PoolId> knownPoolAt(std::size_t entry, std::uint64_t address) const;

    // The pool the allocation recorded at trace entry `entry`, address `address`, is served from.
    // `guessed` is set when rule 3 decided: `prior` if given (the pool a capture underway on the
    // allocation's stream routes it to, ReplayRun::capturePrior), else the default pool.
    PoolId poolFor(std::size_t entry, std::uint64_t address, const CachingAllocator& allocator, bool& guessed,
                   std::optional<PoolId> prior = std::nullopt) const;

    // Flips a guess made at `entry` (default <-> a private pool: the inferred one, or back to the
    // default pool when the guess was a prior's private pool). False if that entry was flipped
    // before (no cycles) or is not a guess.
    bool flip(std::size_t entry);
    // The other way to flip a prior's private-pool guess at `entry`: a capture of its own began on
    // that stream (torch.cuda.graph(g2, stream=s) after g1's capture on s: a new pool, and no entry
    // shows the start). The new pool takes the entry and the `earlier` guesses on the same prior
    // before it (the capture may have begun before the entry; not past the last allocation that
    // a live segment of the prior's pool placed). False if `entry` is not such a guess, was
    // flipped before, or has fewer such guesses before it.
    bool flipToNewPool(std::size_t entry, std::size_t earlier);
    std::size_t flips() const { return flipped_.size(); }

    // A new replay of the trace starts: forget the previous attempt's assignments (an entry
    // flipped back to the default pool must not stay assigned).
    void startReplay() {
        used_.clear();
        privateGuess_.clear();
        priorLog_.clear();
    }

    // The entry's Python stack is inside torch.cuda.empty_cache() (nullopt: no stack).
    static std::optional<bool> inEmptyCacheCall(const StackTable& stacks, std::uint32_t stackId);
    // The entry's Python stack runs inside torch.cuda.graph's capture_begin (false without one).
    static bool inCaptureBegin(const StackTable& stacks, std::uint32_t stackId);
    // The segment release at trace entry `entry` came from a pool's owner, a MemPool's destructor
    // (releasePool, then emptyCache(its id): that pool's segments only). Its Python stack is
    // neither torch.cuda.empty_cache()'s nor, when an allocation follows the release's segment
    // events, that allocation's: c10's malloc gathers its context once and every release it makes
    // (GC, release_available_cached_blocks, the retry's release_cached_blocks) carries it.
    static bool releasedByPoolOwner(const RecordedTrace& trace, std::size_t entry);

    // Every entry routed to a private pool by the last replay (recorded by it), for what-ifs.
    std::map<std::size_t, PoolId>& assignments() { return used_; }
    const std::map<std::size_t, PoolId>& assignments() const { return used_; }

private:
    struct KnownRange {
        std::uint64_t address = 0;
        std::uint64_t size = 0;
        PoolId pool;
        std::size_t since = 0;  // the first entry after the last segment_free over the range
        std::size_t until = static_cast<std::size_t>(-1);  // the owner's release of the range
        bool covers(std::size_t entry, std::uint64_t at) const {
            return entry >= since && entry < until && at >= address && at - address < size;
        }
    };
    void addOwnerReleases(const RecordedTrace& trace);
    void joinOwnersToFinalPools(const RecordedTrace& trace, std::size_t finalRanges);
    std::vector<KnownRange> known_;         // final segments (private pools first), owners' releases
    std::size_t privateRanges_ = 0;         // known_'s ranges of private pools
    std::map<std::size_t, PoolId> forced_;  // flipped guesses (or a what-if's fixed routing)
    std::set<std::size_t> flipped_;
    mutable std::set<std::size_t> privateGuess_;  // entries whose rule-3 guess was a private pool
    struct PriorUse {
        std::size_t entry;
        PoolId prior;
        bool guessed;
    };
    mutable std::vector<PriorUse> priorLog_;  // every allocation that had a capture's prior
    bool fixed_ = false;
    mutable std::map<std::size_t, PoolId> used_;
};

}  // namespace allocscope::alloc
