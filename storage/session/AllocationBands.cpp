#include "storage/session/AllocationBands.h"

#include "storage/session/AllocationBandTable.h"
#include "storage/session/TimelineQuery.h"

namespace allocscope::storage {

AllocationOverview AllocationBands::load(SessionReader& reader, int run, const std::function<bool(double)>& progress) {
    AllocationOverview out;
    const RunRow row = reader.run(run);
    out.eventCount = row.eventCount;
    if (out.eventCount == 0) return out;
    out.bands = AllocationBandTable::read(reader.db(), run);
    if (out.bands.empty()) {
        // An older session (or an interrupted run): the same ranking, fed from the stored events.
        out.computedFromEvents = true;
        AllocationRanking ranking;
        bool stopped = false;
        reader.forEachChunk(run, 0, out.eventCount - 1, [&](std::uint64_t first, const std::vector<alloc::Event>& events) {
            for (const alloc::Event& e : events) ranking.observe(e);
            if (progress && !progress(0.9 * static_cast<double>(first + events.size()) / static_cast<double>(out.eventCount))) {
                stopped = true;
                return false;
            }
            return true;
        });
        if (stopped) return {};
        out.bands = ranking.finish();
    }
    for (const AllocationBand& b : out.bands) {
        if (b.stackId != 0 && !out.stacks.count(b.stackId)) out.stacks[b.stackId] = reader.stack(run, b.stackId);
    }
    out.phases = reader.phases(run);
    const int buckets = static_cast<int>(std::min<std::uint64_t>(kEnvelopeBuckets, out.eventCount));
    out.bucketEvents = (out.eventCount + static_cast<std::uint64_t>(buckets) - 1) / static_cast<std::uint64_t>(buckets);
    const int count = static_cast<int>((out.eventCount + out.bucketEvents - 1) / out.bucketEvents);
    out.allocatedMin.assign(static_cast<std::size_t>(count), 0);
    out.allocatedMax.assign(static_cast<std::size_t>(count), 0);
    // TimelineQuery's buckets need not fall on our grid: each of its buckets is spread over the
    // grid buckets it covers (a wide query reads only the stored 64-event samples).
    const Timeline timeline = TimelineQuery::build(reader, run, 0, out.eventCount - 1, count);
    std::vector<bool> seen(static_cast<std::size_t>(count), false);
    for (const TimelineBucket& b : timeline.buckets) {
        for (std::uint64_t k = b.firstSeq / out.bucketEvents; k <= b.lastSeq / out.bucketEvents && k < static_cast<std::uint64_t>(count); ++k) {
            auto& lo = out.allocatedMin[k];
            auto& hi = out.allocatedMax[k];
            if (!seen[k] || b.allocated.min < lo) lo = b.allocated.min;
            if (!seen[k] || b.allocated.max > hi) hi = b.allocated.max;
            seen[k] = true;
        }
    }
    for (std::size_t k = 1; k < seen.size(); ++k) {
        if (!seen[k]) {
            out.allocatedMin[k] = out.allocatedMin[k - 1];
            out.allocatedMax[k] = out.allocatedMax[k - 1];
        }
    }
    if (progress) progress(1.0);
    return out;
}

}  // namespace allocscope::storage
