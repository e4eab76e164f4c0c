#pragma once
// Where a run is most worth looking at first: the event a freshly opened run shows.
#include <QtGlobal>

#include "views/data/TimelineData.h"

namespace allocscope::views {

// The last event of the timeline bucket where reserved memory peaked (among equal peaks, the one
// with the most allocated), within [0, eventCount - 1]; the last event when there are no buckets.
qint64 peakEvent(const TimelineData& timeline, qint64 eventCount);

}  // namespace allocscope::views
