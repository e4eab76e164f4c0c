#pragma once
// Everything the writer thread does for one run being recorded: applies each batch of events to
// a SegmentStateModel and stores the events as a chunk (with its timeline samples), a keyframe
// every `keyframeInterval` events, the stats fixups, heatmap samples (thinned by doubling their
// stride, so a run of any length ends with 1,024 to 2,048 columns), and at the end the summary,
// heatmap grid and stacks. Runs on the writer thread only.
#include <array>
#include <map>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/StackTable.h"
#include "storage/session/AllocationRanking.h"
#include "storage/session/HeatmapRaster.h"
#include "storage/session/SegmentStateModel.h"
#include "storage/session/SessionTypes.h"
#include "storage/session/SqliteDb.h"
#include "storage/session/TimelineSeries.h"

namespace allocscope::storage {

// Events plus the allocator's own statistics where they differ from what the events imply
// (after_count = how many events of the run happened before them), and the phases that closed
// meanwhile: they are stored as they close, not held to the end of the run (a big snapshot has
// hundreds of thousands of record_function regions). Readers order them by (first_seq, depth).
struct RecordBatch {
    std::vector<alloc::Event> events;
    std::vector<std::pair<std::uint64_t, alloc::DeviceStats>> fixups;
    std::vector<PhaseSpan> phases;
    // Stacks interned since the last batch (id, frames), stored with it so that a reader of a run
    // still recording finds the stacks of the events it sees (SessionRecorder::followStacks).
    std::vector<std::pair<std::uint32_t, alloc::Stack>> stacks;
};

inline constexpr std::uint64_t kDefaultKeyframeInterval = 16384;
inline constexpr int kHeatmapColumns = 1024;  // stored grids have 1,024..2,048 columns
inline constexpr int kHeatmapRows = 1024;

class RunBuilder {
public:
    RunBuilder(const alloc::DeviceStats& initial, std::uint64_t keyframeInterval);
    std::int64_t create(SqliteDb& db, const RunInfo& info);
    void append(SqliteDb& db, const RecordBatch& batch);
    // complete = false marks the run interrupted (a recording abandoned without finish()).
    void finish(SqliteDb& db, const alloc::StackTable* stacks, const std::string& divergence, bool complete);
    std::uint64_t eventCount() const { return model_.applied(); }
    std::int64_t runId() const { return runId_; }

private:
    void applyFixup(SqliteDb& db, std::uint64_t afterCount, const alloc::DeviceStats& stats);
    void appendPhases(SqliteDb& db, const std::vector<PhaseSpan>& phases);
    void track(const alloc::Event& e);

    std::int64_t runId_ = 0;
    std::uint64_t keyframeInterval_;
    SegmentStateModel model_;
    SeriesValues series_;
    std::uint64_t opCount_ = 0;
    std::array<std::uint64_t, alloc::kEventActionCount> actionCounts_{};
    std::array<std::int64_t, 4> peaks_{};
    std::int64_t allocatedAtPeakReserved_ = 0;
    std::int64_t maxSegments_ = 0;
    std::int64_t maxLiveBlocks_ = 0;
    std::int64_t phaseOrdinal_ = 0;  // phases stored so far, in the order they closed
    std::int64_t maxInactiveSplit_ = 0;
    std::uint64_t heatStride_ = 256;
    std::vector<HeatmapSample> heatSamples_;
    std::map<std::uint64_t, std::uint64_t> reservedEver_;  // start -> end: the heatmap's axis
    AllocationRanking ranking_;  // the largest allocations, for the Allocations view
};

// Stores a run's stacks: frames and stacks de-duplicated across the whole session.
void writeStacks(SqliteDb& db, std::int64_t runId, const alloc::StackTable& stacks);
// The same for some stacks only, by id (a batch's new ones).
void writeStacks(SqliteDb& db, std::int64_t runId, const std::vector<std::pair<std::uint32_t, alloc::Stack>>& stacks);

}  // namespace allocscope::storage
