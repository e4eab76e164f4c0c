#pragma once
// The memory timeline of a run: allocated / reserved / active / requested bytes, min and max per
// bucket, for any window and bucket count. Narrow windows are exact (events decoded from the
// chunks' start values); wide ones read only the 64-event samples stored beside each chunk, so
// a bucket's range may include up to one sample's worth of events beyond its edges.
#include <cstdint>

#include "storage/session/SessionReader.h"
#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

class TimelineQuery {
public:
    // Events [first, last] (clamped to the run) in `buckets` buckets (fewer if fewer events).
    // Windows up to `exactLimit` events (or with buckets narrower than 4 samples) are exact.
    static constexpr std::uint64_t kExactLimit = 262144;
    static Timeline build(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last, int buckets,
                          std::uint64_t exactLimit = kExactLimit);
};

}  // namespace allocscope::storage
