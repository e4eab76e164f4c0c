#pragma once
// A run's timeline as CSV: one row per bucket, its event range and the min and max of each series.
// A pure function of the view data (no window, no file) so that File ▸ Export ▸ Timeline as CSV
// writes exactly what the chart draws, and so the text can be tested without a window.
#include <QString>

#include "views/data/TimelineData.h"

namespace allocscope::views {

// Header "first_event,last_event,allocated_min,allocated_max,reserved_min,reserved_max,
// active_min,active_max,requested_min,requested_max", then one line per bucket in order, every
// line ending in '\n'. Markers, phases and fragmentation are not part of it.
QString timelineCsv(const TimelineData& timeline);

}  // namespace allocscope::views
