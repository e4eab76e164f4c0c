#pragma once
// The `run_verdict` table: whether each run was compared with a recording and how that came out
// (RunVerdict in SessionTypes.h). Optional, like `history_start`: the first run recorded by a
// build that knows it creates it, in the recording's own transaction. A file without it (every
// session older than it) or without a row for a run reads as VerdictKind::Unknown -- a replay
// stored before verdicts existed was maybe compared and maybe diverged, so it is never shown as
// exact. Builds older than the table never read it, so the schema version stays: nothing an older
// build reads changes, an older file opens read-only as before and is never written to.
#include <cstdint>
#include <map>

#include "storage/session/SessionTypes.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class RunVerdictTable {
public:
    // Creates the table if needed and stores the run's row (in the caller's transaction).
    // Creates the table if the file has none yet (IF NOT EXISTS: safe for concurrent writers,
    // each inside its own write transaction).
    static void createIfMissing(SqliteDb& db);
    static void write(SqliteDb& db, std::int64_t runId, const RunVerdict& verdict);
    // Every run's row; empty when the file has no such table. Rows with a kind this build does not
    // know (a newer build's) read as Unknown.
    static std::map<std::int64_t, RunVerdict> readAll(const SqliteDb& db);
    static RunVerdict read(const SqliteDb& db, std::int64_t runId);
};

}  // namespace allocscope::storage
