#pragma once
// The `history_start` table: where each run's recorded history starts, for runs replayed from a
// history that starts mid-run (HistoryStart in SessionTypes.h). Optional: the first such run
// creates it. A file without it (every session older than it, and every session without such a
// run) reads as "every run starts at the start of its program"; builds older than it never read
// it. So the schema version stays: nothing an older build reads changes, and an older file opens
// read-only as before.
#include <cstdint>
#include <map>
#include <optional>

#include "storage/session/SessionTypes.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class HistoryStartTable {
public:
    // Creates the table if needed and stores the run's row (in the caller's transaction).
    // Creates the table if the file has none yet (IF NOT EXISTS: safe for concurrent writers,
    // each inside its own write transaction).
    static void createIfMissing(SqliteDb& db);
    static void write(SqliteDb& db, std::int64_t runId, const HistoryStart& start);
    // Every run's row; empty when the file has no such table.
    static std::map<std::int64_t, HistoryStart> readAll(const SqliteDb& db);
    static std::optional<HistoryStart> read(const SqliteDb& db, std::int64_t runId);
};

}  // namespace allocscope::storage
