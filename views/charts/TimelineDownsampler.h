#pragma once
// Merges adjacent timeline buckets until at most `maxBuckets` remain, so a chart never holds more
// points than it has pixels. A merged bucket keeps the smallest minimum and the largest maximum of
// its parts (peaks must survive downsampling: an OOM happens at a peak) and the largest
// fragmentation value.
#include <vector>

#include "views/data/TimelineData.h"

namespace allocscope::views {

struct TimelineDownsampler {
    static std::vector<TimelineBucket> downsample(const std::vector<TimelineBucket>& buckets, int maxBuckets);
};

}  // namespace allocscope::views
