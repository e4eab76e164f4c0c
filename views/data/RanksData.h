#pragma once
// The Ranks tab: one row per run of a session holding a distributed job's per-rank runs, with
// the outliers flagged against the median rank. Filled by app/ (RanksController) from the
// session's ranks overview; the rules (median, outlier, fragmentation at the peak) are app/'s.
#include <QString>
#include <QtGlobal>

#include <vector>

#include "views/data/RunListData.h"

namespace allocscope::views {

struct RankRowData {
    RunListRow run;           // number, name, verdict (RunVerdictText words it)
    int rank = -1;            // -1: no rank known
    QString rankSource;       // "file name" / "user_metadata"
    bool complete = false;    // false: interrupted, no numbers
    qint64 peakReserved = 0;
    qint64 peakAllocated = 0;
    double fragmentationAtPeak = 0;  // 1 - allocated / reserved at the peak of reserved (RankOverview)
    qint64 retries = 0;
    qint64 ooms = 0;
    double aboveMedian = 0;   // peak reserved / the median's - 1
    bool oomOutlier = false;
    bool reservedOutlier = false;
    bool outlier() const { return oomOutlier || reservedOutlier; }
};

struct RanksData {
    std::vector<RankRowData> rows;
    int medianRun = 0;  // 0: none
    qint64 medianPeakReserved = 0;
    double threshold = 0.10;  // a share: 0.10 = peak reserved more than 10% above the median
};

}  // namespace allocscope::views
