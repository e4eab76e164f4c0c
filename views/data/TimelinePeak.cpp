#include "views/data/TimelinePeak.h"

#include <algorithm>

namespace allocscope::views {

qint64 peakEvent(const TimelineData& timeline, qint64 eventCount) {
    qint64 best = eventCount - 1;
    qint64 bestReserved = -1;
    qint64 bestAllocated = -1;
    for (const TimelineBucket& b : timeline.buckets) {
        const qint64 reserved = b.bytes[static_cast<std::size_t>(TimelineMetric::Reserved)].max;
        const qint64 allocated = b.bytes[static_cast<std::size_t>(TimelineMetric::Allocated)].max;
        if (reserved > bestReserved || (reserved == bestReserved && allocated > bestAllocated)) {
            bestReserved = reserved;
            bestAllocated = allocated;
            best = b.lastEvent;
        }
    }
    return std::clamp<qint64>(best, 0, std::max<qint64>(eventCount - 1, 0));
}

}  // namespace allocscope::views
