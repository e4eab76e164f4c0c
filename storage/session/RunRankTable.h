#pragma once
// The `run_rank` table: which rank of a distributed job each imported run is (RunRank in
// SessionTypes.h), for the ranks overview. Optional, like `run_verdict` and `history_start`: the
// first run stored with a rank creates it, in the recording's own transaction. A file without it
// (every older session, and every session without ranked imports) reads as "no rank"; older
// builds never read it, so the schema version stays and older files open unchanged.
#include <cstdint>
#include <map>
#include <optional>

#include "storage/session/SessionTypes.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class RunRankTable {
public:
    // Creates the table if needed and stores the run's row (in the caller's transaction).
    static void write(SqliteDb& db, std::int64_t runId, const RunRank& rank);
    // Every run's row; empty when the file has no such table.
    static std::map<std::int64_t, RunRank> readAll(const SqliteDb& db);
    static std::optional<RunRank> read(const SqliteDb& db, std::int64_t runId);
};

}  // namespace allocscope::storage
