#pragma once
// The words for a run's verdict (RunListRow::verdict), shared by the run list's Verdict column
// and the banner over the views, so that both say the same thing. Rule: only a run whose replay
// was compared with its recording and matched it reads "exact"; a diverged, uncompared or
// unknown run never does.
#include <QString>

#include "views/data/RunListData.h"

namespace allocscope::views {

class RunVerdictText {
public:
    // The Verdict column: "exact", "diverged at entry K", "what-if (not compared)", "simulated",
    // "unknown".
    static QString shortText(const RunListRow& run);
    // The Verdict column's tooltip: the stored verdict in full, or why there is none.
    static QString toolTip(const RunListRow& run);
    // The banner over the views; "" when the run needs none (exact, simulated).
    static QString bannerText(const RunListRow& run);
    // Is the banner a warning (a diverged replay) rather than a note?
    static bool bannerIsWarning(const RunListRow& run) { return run.verdict == RunVerdictKind::Diverged; }
};

}  // namespace allocscope::views
