#pragma once
// The ranks overview of a session (a distributed job's per-rank snapshots imported together):
// per run its peak reserved and allocated memory, fragmentation at the peak, retries, OOMs and
// verdict, with the outliers flagged against the median rank. Shared by `allocscope-cli ranks`
// and the GUI's Ranks tab, so both flag the same runs.
//
// Fragmentation at the peak = 1 - allocated / reserved while reserved memory was at its peak, at
// the moment of that peak with the most allocated (RunSummary::fragmentationAtPeak): the share of
// the reserved bytes that held no tensor even then (cached free blocks, rounding, split remainders).
// The median rank: among the complete runs, ordered by peak reserved (then run number), the one
// at position (n - 1) / 2 (the lower median). An outlier: a run with an OOM, or one whose peak
// reserved is more than `threshold` (a share, 0.10 = 10%) above the median's.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

struct RankRow {
    int run = 0;
    std::string name;
    std::optional<RunRank> rank;
    bool complete = false;  // false: interrupted or still recording (no summary: numbers are 0)
    std::int64_t peakReserved = 0;
    std::int64_t peakAllocated = 0;
    double fragmentationAtPeak = 0;
    std::int64_t retries = 0;  // num_alloc_retries at the end
    std::int64_t ooms = 0;
    VerdictKind verdict = VerdictKind::Unknown;
    std::string verdictText;
    std::optional<std::uint64_t> verdictEntry;  // diverged: the trace entry of the first difference
    double aboveMedian = 0;  // peak reserved / the median's - 1 (0 without a median)
    bool oomOutlier = false;
    bool reservedOutlier = false;
    bool outlier() const { return oomOutlier || reservedOutlier; }
};

struct RankOverviewData {
    std::vector<RankRow> rows;  // by rank (runs without one after them), then run number
    int medianRun = 0;          // 0: no complete run
    std::int64_t medianPeakReserved = 0;
    double threshold = 0;
};

class RankOverview {
public:
    static constexpr double kDefaultThreshold = 0.10;
    static RankOverviewData build(const std::vector<RunRow>& runs, double threshold = kDefaultThreshold);
};

}  // namespace allocscope::storage
