#pragma once
// One replay in progress: the simulated device, the allocator, the program being built and the
// map from recorded addresses to tensors. TraceReplayer drives it step by step; to try a step
// with an inferred empty_cache() after trying it without, it builds a fresh ReplayRun and re-runs
// the prefix (the allocator cannot be copied; replays are deterministic, so the prefix lands in
// the same state).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/core/detail/U64Map.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/replay/AddressTies.h"
#include "allocator/replay/CaptureTracker.h"
#include "allocator/replay/PoolRouting.h"
#include "allocator/replay/TraceReplayer.h"
#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {

// A stream no real trace uses: the "other stream" whose record_stream keeps a block pending.
inline constexpr StreamId kReplaySideStream = 0xFFFF'FFFF'FFFF'FF01ull;

// A phase mark the replay applied: its op, the program label of its name, begin or end.
struct AppliedPhase {
    std::uint64_t opIndex = 0;
    std::uint32_t label = 0;  // into ReplayRun::program().labels
    bool begin = true;
};

struct StepOutcome {
    std::vector<AppliedPhase> phases;           // the marks applied before the step's ops
    std::vector<Event> events;                  // everything the allocator emitted in the step
    std::uint64_t programOp = 0;                // op index of the step's program op
    std::optional<std::uint64_t> allocAddress;  // Alloc: where the replay put the block
    bool unexpectedOom = false;                 // an alloc failed that the recording saw succeed
    std::string oomMessage;                     // its OutOfMemoryError text
    bool oomVanished = false;                   // a recorded oom's attempt succeeded
    bool oomReproduced = false;                 // a recorded oom's attempt failed, as recorded
    OomInfo oom;                                // its failure (lastOom()) when reproduced
    std::uint64_t reservedAtOom = 0;            // reserved / allocated bytes just after it
    std::uint64_t allocatedAtOom = 0;
    bool poolGuessed = false;                   // the alloc's pool was guessed (PoolRouting rule 3)
    std::vector<std::string> notes;

    // Back to an empty outcome, keeping the vectors' capacity (ReplayRun::runStep reuses one).
    void clear() {
        phases.clear();
        events.clear();
        programOp = 0;
        allocAddress.reset();
        unexpectedOom = false;
        oomMessage.clear();
        oomVanished = false;
        oomReproduced = false;
        poolGuessed = false;
        notes.clear();
    }
};

class ReplayRun {
public:
    // `firstStep`: the trace's first step (StepCursor), if it has one: what a state restored
    // before it is compared with.
    ReplayRun(const RecordedTrace& trace, const std::optional<TraceStep>& firstStep, const ReplayOptions& options);
    ~ReplayRun();
    ReplayRun(const ReplayRun&) = delete;
    ReplayRun& operator=(const ReplayRun&) = delete;

    // Replays `step`, the trace's step k (StepCursor), into `out`, which it clears first. A caller
    // that passes the same outcome step after step lets its vectors keep their capacity (no
    // allocation per step).
    void runStep(std::size_t k, const TraceStep& step, bool withEmptyCache, StepOutcome& out);
    StepOutcome runStep(std::size_t k, const TraceStep& step, bool withEmptyCache) {
        StepOutcome out;
        runStep(k, step, withEmptyCache, out);
        return out;
    }
    // Route recorded allocations to pools (null: everything to the default pools). Not owned.
    void setRouting(PoolRouting* routing) { routing_ = routing; }
    // The trace entry whose pool guess created the live segment at `segment`, if one did.
    std::optional<std::size_t> guessedCreator(std::uint64_t segment) const;
    // Applies the phase marks recorded after the last entry and returns them.
    std::vector<AppliedPhase> finish();
    // ---- a history that starts mid-run (HistoryWindow); call before the first step ----
    // Applies the state before the first recorded entry: its live blocks become tensors that the
    // recorded frees find (ids past every entry index), each with an Alloc op (plus record_stream
    // and free for a pending free). Returns the events that rebuilt the state.
    std::vector<Event> restore(const std::vector<SegmentInfo>& segments);

    CachingAllocator& allocator() { return *allocator_; }
    Program& program() { return program_; }
    std::uint64_t opCount() const { return opCount_; }
    std::uint64_t eventCount() const { return eventCount_; }
    // The best-fit decisions that addresses settled so far, and which rest on modelled ones.
    const AddressTies& addressTies() const { return ties_; }
    // The most total memory the recorded device can have had, where the recording showed a new
    // expandable reservation inside one of this device's (noteSmallerReservation); nullopt: none.
    std::optional<std::uint64_t> totalMemoryBound() const { return totalMemoryBound_; }

private:
    class Capture;
    std::optional<std::uint64_t> oracle(const PlacementRequest& request);
    std::optional<std::uint64_t> recordedAddress(const PlacementRequest& request,
                                                 const std::map<std::uint64_t, std::uint64_t>& live);
    void noteSmallerReservation(const TraceStep& step, std::size_t last, const std::map<std::uint64_t, std::uint64_t>& live);
    // The recording created this segment (or reservation) at `address` in the current step.
    bool recordedInStep(const PlacementRequest& request, std::uint64_t address) const;
    void onTie(const BestFitTie& tie);
    std::uint64_t push(const Op& op);
    PoolId beginRoute(std::size_t entry, const RecordedEntry& e, bool& guessed);
    void endRoute(PoolId pool);
    struct PoolReleases {
        std::vector<PoolId> byOwner;  // pools whose owner released them itself: emptyCache(id)
        bool others = false;          // a segment went with an explicit (or default) empty_cache()
        bool ownersFirst = false;     // the step's first release was an owner's (del pool; empty_cache())
    };
    PoolReleases releasePoolsFreedIn(const TraceStep& step);
    // The private pools whose segments an allocation's retry released in `step`: released first.
    void releaseRetriedPools(const TraceStep& step);
    // The entry's Python stack is inside torch.cuda.empty_cache() (unknown without a stack).
    std::optional<bool> inEmptyCacheCall(std::uint32_t stackId) const;
    void emitPhases(std::size_t upToEntry);

    const RecordedTrace& trace_;
    const ReplayOptions& options_;
    std::unique_ptr<Capture> capture_;
    std::unique_ptr<SimulatedDevice> device_;
    std::unique_ptr<CachingAllocator> allocator_;
    Program program_;
    std::uint64_t opCount_ = 0;
    std::vector<AppliedPhase> applied_;  // phase marks applied since the last runStep / finish
    static constexpr std::uint32_t kNoLabel = ~std::uint32_t{0};
    std::vector<std::uint32_t> labelOfName_;  // trace phase name -> program label (kNoLabel: none yet)
    std::uint64_t eventCount_ = 0;
    std::size_t nextPhase_ = 0;

    // The step being replayed (before the first: the first), for the recorded-address oracle.
    std::size_t step_ = 0;
    std::optional<TraceStep> current_;
    std::vector<bool> segmentAllocUsed_;  // per entry of the step (indexed from step begin)

    detail::U64Map<std::uint64_t> liveByRecorded_;     // recorded address -> tensor id
    detail::U64Map<std::uint64_t> pendingByRecorded_;  // freed, completion pending
    detail::U64Map<std::uint64_t> replayAddress_;      // tensor id -> replay address

    PoolRouting* routing_ = nullptr;
    std::map<std::uint64_t, std::size_t> guessedSegments_;  // segment base -> entry whose guess made it
    std::set<PoolId> createdPools_;                          // private pools the program created
    CaptureTracker captures_;  // which captures the trace shows, and their pools' priors
    bool emptyCacheThisStep_ = false;

    // Live segment and reservation bases -> whether the recording gave that base (AddressTies.h):
    // the step's recorded answer, while every live range was recorded too. A base missing here
    // was placed by the SimulatedDevice's own policy: modelled.
    detail::U64Map<bool> recordedBase_;
    AddressTies ties_;
    std::optional<BestFitTie> lastTie_;  // the decision being reported (one call per candidate)
    bool lastTieModelled_ = false;
    std::optional<std::uint64_t> totalMemoryBound_;
};

}  // namespace allocscope::alloc
