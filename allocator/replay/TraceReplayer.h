#pragma once
// Replays a RecordedTrace into the caching allocator (reference §18.2) and says whether the
// allocator did exactly what PyTorch did.
//
//   alloc          -> malloc(recorded size, recorded stream)
//   free_requested -> free(); when its free_completed does not follow at once (the block had
//                     stream uses), record_stream on a synthetic side stream first, so the
//                     allocator keeps the block pending ...
//   free_completed -> ... until completePendingFree() exactly where the recording shows it
//   oom            -> malloc(recorded rounded size), which must fail
//
// Addresses: the trace is cut into steps (the segment events since the previous program event,
// plus that event). A new segment of n bytes gets the address of an unused recorded
// segment_alloc of n bytes in its step that overlaps no live segment; a new expandable
// reservation starts at the step's first recorded segment_map outside every live reservation.
// Without segment events (RMM CSV) a new segment starts at the address of the allocation it
// serves (a fresh segment's first block is carved from its start). What-if replays (another
// config) use a PlacementModel instead.
//
// Explicit empty_cache() leaves no event of its own, only segment frees the allocator did not
// cause. Rule: releases before a free event or after the last program event are an
// empty_cache() before it (frees never release segments). Releases before an alloc/oom: the
// step is run without an empty_cache(); if its segment events differ from the recording, the
// state is rebuilt by re-running the prefix and the step is run after an empty_cache(); the
// variant that reproduces the recording is kept (without one, when both do: the allocator's own
// OOM-retry release looks the same). Limit: an empty_cache() that released nothing left no
// event and cannot be seen (only its num_sync_all_streams + 1 is missing); nor can one in a
// trace without segment events.
//
// Limit of the pending-free rule: a free_completed that PyTorch emitted from the OOM-retry's
// synchronize *inside* an allocation (after its first search failed) looks like one emitted at
// the start of that allocation; the replay completes it before the allocation, so the first
// search may already find the block. None of the shared traces has a pending free.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/replay/AddressTies.h"
#include "allocator/replay/HistoryWindow.h"
#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

class PoolRouting;

struct ReplayOptions {
    AllocatorConfig config;
    std::optional<double> memoryFraction;  // set_per_process_memory_fraction before the first op
    std::uint64_t totalMemory = 85'017'493'504ull;  // h100-80gb
    std::uint64_t otherMemory = 552'402'944ull;     // CUDA context and other processes
    // Placement of new segments. null: the recorded addresses (the oracle above), which is only
    // right when replaying under the recorded config. Not owned; must outlive the replay.
    PlacementModel* placement = nullptr;
    // With recorded addresses: asked when the step has no recorded answer (the replay has left
    // the recording, e.g. under another memory fraction). null: the SimulatedDevice's own policy.
    PlacementModel* fallbackPlacement = nullptr;
    // Steps before which an explicit empty_cache() runs. nullopt: inferred from the recording
    // (needs recorded placement). A what-if passes the steps its exact replay inferred.
    std::optional<std::vector<std::size_t>> emptyCacheSteps;
    // Compare the replay's segment events, allocation addresses and final layout with this
    // recording of the same program (aligned by program event). null with recorded placement:
    // the replayed trace itself. null with a placement model: no comparison.
    const RecordedTrace* expected = nullptr;
    // An allocation the recording did not see fail: stop there (false) or skip that tensor and go
    // on (true).
    bool continueAfterOom = false;
    // Which trace entries' allocations go to a private pool (a what-if passes what the exact
    // replay found: ReplayResult::poolAssignments). nullopt: inferred from the recording (see
    // PoolRouting), which needs recorded placement.
    std::optional<std::map<std::size_t, PoolId>> poolAssignments;
    // false: ReplayResult::program keeps no ops, only the labels (opCount says how many were
    // applied), for a caller that needs no more, such as an import of a snapshot with millions
    // of entries (48 bytes per op). The ops are applied all the same; onPhase still hears of
    // every phase mark.
    bool keepOps = true;
    // Told of each phase mark (record_function START/END) of the accepted replay: its op index,
    // its name, begin or end; in op order, before the events of the step the mark precedes.
    std::function<void(std::uint64_t opIndex, const std::string& name, bool begin)> onPhase;
    EventSink* sink = nullptr;  // receives every event of the accepted replay, in order
    // Called after each accepted step's events went to `sink`, with the allocator's statistics
    // then: a recorder stores what events do not show (retries, syncs) where it changed.
    std::function<void(const DeviceStats&)> afterStep;
};

// Which way the replay's memory differed from the recording's where it first diverged. Every
// decision a memory limit steers (alloc_block's cap, garbage collection's threshold) releases
// or fails more under a smaller limit, so this says which way a probed limit is off
// (LimitInference): Higher, the replay released a segment (or ran out of memory) where the
// recording kept or created one; Lower, the recording released one where the replay did not.
enum class MemoryPressure { Unknown, Higher, Lower };

struct ReplayDivergence {
    std::uint64_t opIndex = 0;      // index into ReplayResult::program.ops
    std::size_t entryIndex = 0;     // the recorded trace entry of that step's program event
    std::string what;
    MemoryPressure pressure = MemoryPressure::Unknown;
};

// A recorded oom entry the replay reached: did its request fail again, and how.
struct RecordedOomOutcome {
    std::size_t entryIndex = 0;
    std::uint64_t opIndex = 0;
    bool reproduced = false;  // the request failed, as recorded (false: it succeeded)
    OomInfo oom;              // reproduced: the allocator's failure, PyTorch's message included
    std::uint64_t reserved = 0;   // reproduced: reserved / allocated bytes at the failure
    std::uint64_t allocated = 0;
};

struct ReplayResult {
    DeviceStats stats;
    std::vector<SegmentInfo> segments;  // the final layout (PyTorch's snapshot `segments`)
    std::string summary;                // memory_summary()
    Program program;                    // the ops the replay applied (trace -> program); see keepOps
    std::uint64_t opCount = 0;          // how many ops the replay applied (program.ops.size() with keepOps)
    std::vector<std::size_t> emptyCacheSteps;  // inferred (or given) explicit empty_cache()s
    std::optional<ReplayDivergence> divergence;  // first difference from the expected recording
    std::optional<std::string> layoutDifference;  // final layout vs the snapshot's segments
    // An allocation failed that succeeded in the recording: "the program would have raised".
    std::optional<std::uint64_t> unexpectedOomOp;
    std::string unexpectedOomMessage;    // PyTorch's OutOfMemoryError text for it
    bool stoppedEarly = false;
    std::vector<std::string> notes;      // things worth saying (ignored entries, OOMs that vanished)
    std::size_t steps = 0;
    std::uint64_t events = 0;            // events the allocator produced
    std::uint64_t rewinds = 0;           // prefix re-runs done by the empty_cache() inference
    // Trace entries whose allocations the replay routed to a private pool, and how many pool
    // guesses it had to revise (each revision is one more replay of the whole trace).
    std::map<std::size_t, PoolId> poolAssignments;
    std::size_t poolRevisions = 0;
    // Set when the recorded history starts mid-run (a ring buffer that overflowed, a state-only
    // snapshot): the replay started from the state before the first recorded entry, rebuilt from
    // the final segments (HistoryWindow). Cumulative statistics then count only the recorded
    // window (HistoryWindow::windowOnlyKeys()).
    std::optional<HistoryTruncation> truncation;
    // Best-fit decisions that segment addresses settled, and how many of them rest on addresses
    // that did not come from the recording (AddressTies.h): how firm a what-if's numbers are.
    AddressTies addressTies;
    // The device the replay ran on. As the options gave it, unless the recording's expandable
    // reservations showed a smaller one (ReservationSize): a replay under recorded addresses then
    // runs on the largest device they allow, with the same memory free, and says so in `notes`.
    std::uint64_t totalMemory = 0;
    std::uint64_t otherMemory = 0;
    // Set when the first difference is a new reservation that the recording placed inside one of
    // the replay's: the most total memory the recorded device can have (ReplayRun).
    std::optional<std::uint64_t> totalMemoryBound;
    // Every recorded oom entry the replay reached, in order (LimitInference bisects on them).
    std::vector<RecordedOomOutcome> recordedOoms;

    bool exact() const { return !divergence && !layoutDifference && !unexpectedOomOp; }
};

class TraceReplayer {
public:
    static ReplayResult replay(const RecordedTrace& trace, const ReplayOptions& options);
    // A what-if: the recorded program under options.config with options.placement (required).
    // The program's explicit empty_cache() calls are learnt first by an exact replay under
    // `recordedConfig` (its emptyCacheSteps), unless options.emptyCacheSteps is already given or
    // the trace has no segment events.
    static ReplayResult replayWhatIf(const RecordedTrace& trace, const AllocatorConfig& recordedConfig,
                                     ReplayOptions options);

private:
    // Guesses which segments private pools (CUDA graphs, MemPools) own by re-running the trace
    // with revised guesses until it replays exactly (PoolRouting); silent: options carry no sink.
    // `accepted`: the routing that produced the returned result (nullopt: none, the default pools).
    // `deviceFirst`: a first replay whose difference asks for a smaller device is returned as it
    // is, without a search (the device is settled before the pools).
    static ReplayResult inferPools(const RecordedTrace& trace, const ReplayOptions& options,
                                   std::optional<PoolRouting>& accepted, bool deviceFirst = false);
};

}  // namespace allocscope::alloc
