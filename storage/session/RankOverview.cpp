#include "storage/session/RankOverview.h"

#include <algorithm>

namespace allocscope::storage {

RankOverviewData RankOverview::build(const std::vector<RunRow>& runs, double threshold) {
    RankOverviewData out;
    out.threshold = threshold;
    for (const RunRow& run : runs) {
        RankRow row;
        row.run = run.number;
        row.name = run.info.name;
        row.rank = run.rank;
        row.verdict = run.verdict.kind;
        row.verdictText = run.verdict.text;
        row.verdictEntry = run.verdict.entry;
        if (run.summary && run.status == RunStatus::Complete) {
            const RunSummary& s = *run.summary;
            row.complete = true;
            row.peakReserved = s.peakReserved;
            row.peakAllocated = s.peakAllocated;
            row.fragmentationAtPeak = s.fragmentationAtPeak;
            row.retries = s.finalStats.num_alloc_retries;
            row.ooms = s.numOoms;
        }
        out.rows.push_back(std::move(row));
    }
    std::vector<const RankRow*> complete;
    for (const RankRow& row : out.rows) {
        if (row.complete) complete.push_back(&row);
    }
    if (!complete.empty()) {
        std::sort(complete.begin(), complete.end(), [](const RankRow* a, const RankRow* b) {
            return a->peakReserved != b->peakReserved ? a->peakReserved < b->peakReserved : a->run < b->run;
        });
        const RankRow* median = complete[(complete.size() - 1) / 2];
        out.medianRun = median->run;
        out.medianPeakReserved = median->peakReserved;
    }
    for (RankRow& row : out.rows) {
        if (!row.complete) continue;
        row.oomOutlier = row.ooms > 0;
        if (out.medianPeakReserved > 0) {
            row.aboveMedian = static_cast<double>(row.peakReserved) / static_cast<double>(out.medianPeakReserved) - 1.0;
            row.reservedOutlier = row.aboveMedian > threshold;
        }
    }
    std::stable_sort(out.rows.begin(), out.rows.end(), [](const RankRow& a, const RankRow& b) {
        if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
        if (a.rank && a.rank->rank != b.rank->rank) return a.rank->rank < b.rank->rank;
        return a.run < b.run;
    });
    return out;
}

}  // namespace allocscope::storage
