#pragma once
// What the Allocations view draws for a run, gathered once when the run is opened: the largest
// allocations with their lifetimes (from the `allocation_band` table, or computed from the run's
// events for a session recorded before that table existed -- in memory, the file is not written),
// the frames of their stacks, the phase each began in, and the allocated-bytes envelope of the
// whole run at a fixed resolution (the stack of bands sits on it: what the drawn bands do not
// cover is the "smaller allocations" band).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "allocator/core/StackTable.h"
#include "storage/session/AllocationRanking.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

struct AllocationOverview {
    std::uint64_t eventCount = 0;
    std::vector<AllocationBand> bands;              // largest first (AllocationRanking's order)
    std::map<std::uint32_t, alloc::Stack> stacks;   // the bands' stacks by id
    std::vector<PhaseSpan> phases;
    // Allocated bytes over the whole run: bucket k covers events [k * bucketEvents, (k+1) *
    // bucketEvents), min and max over it.
    std::uint64_t bucketEvents = 1;
    std::vector<std::int64_t> allocatedMin, allocatedMax;
    bool computedFromEvents = false;  // the session has no stored bands for this run
};

class AllocationBands {
public:
    static constexpr int kEnvelopeBuckets = 16384;
    // progress(fraction) may return false to stop (then the overview is empty).
    static AllocationOverview load(SessionReader& reader, int run, const std::function<bool(double)>& progress = {});
};

}  // namespace allocscope::storage
