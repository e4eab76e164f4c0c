#include "views/data/TimelineCsv.h"

namespace allocscope::views {

QString timelineCsv(const TimelineData& timeline) {
    // The columns follow TimelineMetric's order (bytes[] is indexed by it).
    QString text = QStringLiteral(
        "first_event,last_event,allocated_min,allocated_max,reserved_min,reserved_max,active_min,active_max,requested_min,requested_max\n");
    for (const TimelineBucket& b : timeline.buckets) {
        text += QStringLiteral("%1,%2").arg(b.firstEvent).arg(b.lastEvent);
        for (const MinMax& m : b.bytes) text += QStringLiteral(",%1,%2").arg(m.min).arg(m.max);
        text += QLatin1Char('\n');
    }
    return text;
}

}  // namespace allocscope::views
