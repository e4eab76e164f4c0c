#pragma once
// The `allocation_band` table: each run's largest allocations with their lifetimes
// (AllocationRanking), written once when the run is recorded so the Allocations view opens
// without reading the run's events. Optional, like `run_verdict`: created by the first run
// recorded by a build that knows it, in the recording's own transaction; older builds never read
// it, so the schema version stays. A session recorded before it has no rows: AllocationBands
// then computes the same bands from the run's events, in memory (the file is not written).
#include <cstdint>
#include <vector>

#include "storage/session/AllocationRanking.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class AllocationBandTable {
public:
    // Creates the table if needed and stores the run's bands (in the caller's transaction).
    static void write(SqliteDb& db, std::int64_t runId, const std::vector<AllocationBand>& bands);
    // The run's bands, largest first; empty when the file has no table or no rows for the run.
    static std::vector<AllocationBand> read(const SqliteDb& db, std::int64_t runId);
};

}  // namespace allocscope::storage
