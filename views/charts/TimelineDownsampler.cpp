#include "views/charts/TimelineDownsampler.h"

#include <algorithm>

namespace allocscope::views {

std::vector<TimelineBucket> TimelineDownsampler::downsample(const std::vector<TimelineBucket>& buckets, int maxBuckets) {
    if (maxBuckets < 1) maxBuckets = 1;
    const std::size_t target = static_cast<std::size_t>(maxBuckets);
    if (buckets.size() <= target) return buckets;
    std::vector<TimelineBucket> out;
    out.reserve(target);
    // Group i takes buckets [i * n / target, (i + 1) * n / target): groups differ by at most one.
    const std::size_t n = buckets.size();
    for (std::size_t g = 0; g < target; ++g) {
        const std::size_t begin = g * n / target;
        const std::size_t end = (g + 1) * n / target;
        if (begin >= end) continue;
        TimelineBucket merged = buckets[begin];
        for (std::size_t i = begin + 1; i < end; ++i) {
            const TimelineBucket& b = buckets[i];
            merged.lastEvent = b.lastEvent;
            for (std::size_t m = 0; m < merged.bytes.size(); ++m) {
                merged.bytes[m].min = std::min(merged.bytes[m].min, b.bytes[m].min);
                merged.bytes[m].max = std::max(merged.bytes[m].max, b.bytes[m].max);
            }
            merged.fragmentation = std::max(merged.fragmentation, b.fragmentation);
        }
        out.push_back(merged);
    }
    return out;
}

}  // namespace allocscope::views
