#include "views/data/RunVerdictText.h"

namespace allocscope::views {
namespace {

// Runs from an imported trace (RunListRow::source starts with the session's source kind).
bool fromTrace(const RunListRow& run) {
    return run.source.startsWith(QLatin1String("snapshot")) || run.source.startsWith(QLatin1String("csv"));
}

}  // namespace

QString RunVerdictText::shortText(const RunListRow& run) {
    switch (run.verdict) {
        case RunVerdictKind::Exact: return QStringLiteral("exact");
        case RunVerdictKind::Diverged:
            return run.divergedEntry >= 0 ? QStringLiteral("diverged at entry %1").arg(run.divergedEntry) : QStringLiteral("diverged");
        case RunVerdictKind::WhatIf: return QStringLiteral("what-if (not compared)");
        case RunVerdictKind::Simulated: return QStringLiteral("simulated");
        case RunVerdictKind::Unknown: break;
    }
    return QStringLiteral("unknown");
}

QString RunVerdictText::toolTip(const RunListRow& run) {
    switch (run.verdict) {
        case RunVerdictKind::Exact:
            return QStringLiteral("exact: the replay under the recording's own settings reproduced every recorded segment "
                                  "event, every allocation's address and the final layout");
        case RunVerdictKind::Diverged:
            return run.verdictText + QStringLiteral("\nFrom there on the numbers are AllocScope's, not PyTorch's.");
        case RunVerdictKind::WhatIf:
        case RunVerdictKind::Simulated: return run.verdictText;
        case RunVerdictKind::Unknown: break;
    }
    return fromTrace(run) ? QStringLiteral("unknown: this session stores no verdict for the run (recorded by an older "
                                           "AllocScope, or stopped before its replay was compared). It is not known to match "
                                           "the recording.")
                          : QStringLiteral("unknown: this session stores no verdict for the run (recorded by an older "
                                           "AllocScope, or stopped before it finished)");
}

QString RunVerdictText::bannerText(const RunListRow& run) {
    switch (run.verdict) {
        case RunVerdictKind::Diverged:
            return (run.divergedEntry >= 0
                        ? QStringLiteral("Run %1 diverged from the recording at trace entry %2").arg(run.number).arg(run.divergedEntry)
                        : QStringLiteral("Run %1 diverged from the recording").arg(run.number)) +
                   QStringLiteral(" — numbers are not PyTorch's.");
        case RunVerdictKind::WhatIf:
            return QStringLiteral("Run %1 is a what-if, not compared with a recording — numbers are AllocScope's prediction, "
                                  "not PyTorch's.")
                .arg(run.number);
        case RunVerdictKind::Unknown:
            if (!fromTrace(run)) return QString();
            return QStringLiteral("Run %1: this session does not say whether the replay matched the recording (no verdict "
                                  "stored) — do not read it as PyTorch's run.")
                .arg(run.number);
        case RunVerdictKind::Exact:
        case RunVerdictKind::Simulated: break;
    }
    return QString();
}

}  // namespace allocscope::views
