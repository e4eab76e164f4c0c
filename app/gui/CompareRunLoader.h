#pragma once
// Reads what the Compare tab shows about one recorded run back from the session: the numbers
// (stored summary, final statistics, the cost model, and the waste at the peak-reserved point
// rebuilt with StateCursor because the summary does not keep it), the reserved timeline by
// program op, and the segment map at any program op. Runs on background threads; every call
// takes its own SessionReader (one per thread).
#include <cstdint>
#include <optional>

#include "allocator/compare/CostModel.h"
#include "allocator/compare/RunMetrics.h"
#include "storage/session/SessionReader.h"
#include "views/data/CompareData.h"
#include "views/data/SegmentMapData.h"

namespace allocscope::app {

class CompareRunLoader {
public:
    // Points of the reserved timeline per run (merged per op, so fewer for short programs).
    static constexpr int kTimelineBuckets = 1200;

    // SessionError if there is no such run; a run still recording has no summary (error too).
    static views::CompareRun load(storage::SessionReader& reader, int run, const alloc::CostModel& cost = {});
    // A run measured without recording (the cudaMallocAsync model).
    static views::CompareRun fromMetrics(const alloc::RunMetrics& metrics, const QString& label, const QString& configText);

    // The seq of the last event caused by an op <= `op`; nullopt when the run has no event by then.
    static std::optional<std::uint64_t> lastEventAtOp(storage::SessionReader& reader, int run, std::uint64_t op);
    // The layout right after program op `op` (empty before the run's first event).
    static views::SegmentMapData mapAtOp(storage::SessionReader& reader, int run, std::uint64_t op);
    // The program ops the run applied (the largest op index of its events + 1, or the summary's
    // op count when that is larger).
    static std::uint64_t opCount(storage::SessionReader& reader, int run);
};

}  // namespace allocscope::app
