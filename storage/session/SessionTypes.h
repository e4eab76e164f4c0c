#pragma once
// The plain structs that session queries return (run list, timeline, state, heatmap, events,
// block history). Small and copyable: the GUI's background jobs hand them to the views.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/core/StackTable.h"

namespace allocscope::storage {

// What a new run is: its source and the allocator it ran on.
struct RunInfo {
    std::string name;
    std::string sourceKind = "demo";  // "demo" (workload + parameters), "snapshot", "csv"
    std::string source;               // "frag101 seed=1 steps=100", or the imported file's path
    std::string config;               // PYTORCH_CUDA_ALLOC_CONF string
    std::string gpu;                  // GPU preset name
    std::uint64_t totalMemory = 0;
    double memoryFraction = 1.0;
};

enum class RunStatus { Complete, Interrupted, Recording };
const char* runStatusName(RunStatus status);

struct RunSummary {
    std::uint64_t opCount = 0;
    std::int64_t peakAllocated = 0;
    std::int64_t peakReserved = 0;
    std::int64_t peakActive = 0;
    std::int64_t peakRequested = 0;
    std::vector<std::uint64_t> actionCounts;  // indexed by alloc::EventAction
    std::int64_t numOoms = 0;
    std::int64_t maxSegments = 0;
    std::int64_t maxLiveBlocks = 0;
    std::int64_t maxInactiveSplitBytes = 0;
    // 1 - allocated / reserved at the peak of reserved memory, at the moment of that peak with the
    // most allocated (sessions recorded before: at its first event, a segment_alloc)
    double fragmentationAtPeak = 0;
    double finalFragmentation = 0;
    alloc::DeviceStats finalStats;
};

// Where a run's recorded history starts when it starts mid-run (a PyTorch ring buffer that
// overflowed, a state-only snapshot: alloc::HistoryTruncation): the events before firstSeq (cause
// "restored") rebuild the state the recording started in.
struct HistoryStart {
    std::uint64_t firstSeq = 0;     // the first event of the recorded history
    std::uint64_t liveBlocks = 0;   // allocated or pending-free blocks live before it
    std::uint64_t liveBytes = 0;
    bool noHistory = false;         // a state-only snapshot: nothing but the final state
    bool operator==(const HistoryStart&) const = default;
};

// Whether a run was checked against a recording, and how that came out (RunVerdictTable). A
// replay of a trace under its own recorded settings (an import) is compared with the recording:
// Exact or Diverged. A what-if (another config, no recording of it to compare with) and a
// workload run (simulated, nothing recorded) are not compared. Unknown: the session holds no
// verdict for the run (recorded before verdicts were stored, or a replay cancelled before its
// comparison finished) -- never to be read as exact.
enum class VerdictKind { Unknown, Exact, Diverged, WhatIf, Simulated };
const char* verdictKindName(VerdictKind kind);  // "unknown", "exact", "diverged", "what_if", "simulated"
std::optional<VerdictKind> verdictKindFromName(std::string_view name);

struct RunVerdict {
    VerdictKind kind = VerdictKind::Unknown;
    // The full verdict: "exact", "diverged at trace entry K: <what>", "what-if (not compared)",
    // "simulated (no recording to compare with)"; "" for Unknown.
    std::string text;
    std::optional<std::uint64_t> entry;  // Diverged: the trace entry K of the first difference
    bool operator==(const RunVerdict&) const = default;
};

// Which rank of a distributed job a run is (RunRankTable): an import whose file name or
// user_metadata carries one (storage::RankRule).
struct RunRank {
    int rank = 0;
    std::string source;  // "file name" or "user_metadata"
    bool operator==(const RunRank&) const = default;
};

struct RunRow {
    int number = 0;  // from 1, in creation order
    RunInfo info;
    RunStatus status = RunStatus::Complete;
    std::string createdAt;
    std::uint64_t eventCount = 0;
    std::string divergence;              // import: how the replay differed from the recording
    std::optional<RunSummary> summary;   // complete runs only
    std::optional<HistoryStart> historyStart;  // set when the recorded history starts mid-run
    RunVerdict verdict;                  // Unknown when the session stores none for the run
    std::optional<RunRank> rank;         // none: not known (and every run of older sessions)
};

struct SeriesRange {
    std::int64_t min = 0;
    std::int64_t max = 0;
};

// One timeline bucket: min and max of each series over the events [firstSeq, lastSeq].
struct TimelineBucket {
    std::uint64_t firstSeq = 0;
    std::uint64_t lastSeq = 0;
    SeriesRange allocated, reserved, active, requested;
};

struct Timeline {
    std::vector<TimelineBucket> buckets;
    // false when bucket edges were widened to the 64-event sample grid (wide windows).
    bool exact = true;
};

// The allocator's state right after event `seq` (and any event-less ops that followed it).
struct StateAtEvent {
    std::uint64_t seq = 0;
    alloc::Event event;
    std::vector<alloc::SegmentInfo> segments;
    alloc::DeviceStats stats;
};

// One stretch of the heatmap's address axis: a reserved range laid after the previous one.
struct AxisRange {
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;  // position on the squeezed axis
};

// What a byte of the heatmap's address axis holds at a column's event. Requested and
// RoundingWaste split an allocated block (the bytes the program asked for, and the rest of the
// block: rounding, an unsplit remainder); PendingFree is a block freed but waiting for stream
// events; Inactive is cached free memory; Unmapped is address space of an expandable segment's
// reservation whose pages are not mapped then. Whatever is left is address space not reserved.
enum class HeatShare : std::uint8_t { Requested, RoundingWaste, Inactive, PendingFree, Unmapped };
inline constexpr int kHeatShareCount = 5;

// time x address occupancy: for each share, cell (column, row) at [column * rows + row] holds
// 0..255 = the share of the row's bytes in that state at the column's event.
struct HeatmapGrid {
    int columns = 0;
    int rows = 0;
    std::vector<std::uint64_t> columnEvents;  // the event each column samples
    std::vector<AxisRange> axis;
    std::uint64_t axisBytes = 0;
    std::array<std::vector<std::uint8_t>, kHeatShareCount> shares;

    std::vector<std::uint8_t>& plane(HeatShare s) { return shares[static_cast<std::size_t>(s)]; }
    const std::vector<std::uint8_t>& plane(HeatShare s) const { return shares[static_cast<std::size_t>(s)]; }
    std::size_t cellCount() const {
        return static_cast<std::size_t>(columns < 0 ? 0 : columns) * static_cast<std::size_t>(rows < 0 ? 0 : rows);
    }
    // Every plane holds cellCount() cells and every column names its event.
    bool consistent() const {
        if (columns < 0 || rows < 0 || columnEvents.size() != static_cast<std::size_t>(columns)) return false;
        for (const auto& p : shares) {
            if (p.size() != cellCount()) return false;
        }
        return true;
    }
};

struct EventPage {
    std::uint64_t firstSeq = 0;
    std::vector<alloc::Event> events;
    std::uint64_t totalEvents = 0;  // in the run
};

// A named region of a run (Op::phase / a snapshot's record_function annotations): the events
// [firstSeq, lastSeq] happened inside it. Phases nest (depth 0 = outermost); a phase that saw
// no event is not stored; one still open when the run ended closes at its last event.
struct PhaseSpan {
    std::string name;
    std::uint64_t firstSeq = 0;
    std::uint64_t lastSeq = 0;
    int depth = 0;
    std::uint64_t firstOp = 0;  // program op indexes of its begin and end marks (aligns runs)
    std::uint64_t lastOp = 0;
};

struct BlockHistory {
    std::uint64_t address = 0;
    std::uint64_t size = 0;
    std::uint64_t requested = 0;
    std::uint64_t stream = 0;
    std::optional<alloc::Event> alloc;
    std::optional<alloc::Event> freeRequested;
    std::optional<alloc::Event> freeCompleted;
    alloc::Stack stack;  // the allocation's frames, innermost first
};

}  // namespace allocscope::storage
