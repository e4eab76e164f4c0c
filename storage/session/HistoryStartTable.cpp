#include "storage/session/HistoryStartTable.h"

namespace allocscope::storage {
namespace {

constexpr const char* kCreateSql = R"SQL(
CREATE TABLE IF NOT EXISTS history_start (
    run INTEGER PRIMARY KEY REFERENCES run(id),
    first_seq INTEGER NOT NULL,         -- the first recorded event; those before it are restored state
    live_blocks INTEGER NOT NULL,       -- allocated or pending-free blocks live before it
    live_bytes INTEGER NOT NULL,
    no_history INTEGER NOT NULL         -- 1: a state-only snapshot
);
)SQL";

HistoryStart readRow(SqliteStatement& stmt) {
    HistoryStart start;
    start.firstSeq = static_cast<std::uint64_t>(stmt.columnInt(1));
    start.liveBlocks = static_cast<std::uint64_t>(stmt.columnInt(2));
    start.liveBytes = static_cast<std::uint64_t>(stmt.columnInt(3));
    start.noHistory = stmt.columnInt(4) != 0;
    return start;
}

constexpr const char* kSelect = "SELECT run, first_seq, live_blocks, live_bytes, no_history FROM history_start";

}  // namespace

void HistoryStartTable::createIfMissing(SqliteDb& db) { db.exec(kCreateSql); }

void HistoryStartTable::write(SqliteDb& db, std::int64_t runId, const HistoryStart& start) {
    createIfMissing(db);
    SqliteStatement stmt = db.prepare(
        "INSERT OR REPLACE INTO history_start(run, first_seq, live_blocks, live_bytes, no_history) VALUES (?, ?, ?, ?, ?)");
    stmt.bind(1, runId).bind(2, static_cast<std::int64_t>(start.firstSeq));
    stmt.bind(3, static_cast<std::int64_t>(start.liveBlocks)).bind(4, static_cast<std::int64_t>(start.liveBytes));
    stmt.bind(5, static_cast<std::int64_t>(start.noHistory ? 1 : 0));
    stmt.run();
}

std::map<std::int64_t, HistoryStart> HistoryStartTable::readAll(const SqliteDb& db) {
    std::map<std::int64_t, HistoryStart> out;
    if (!db.hasTable("history_start")) return out;
    SqliteStatement stmt = db.prepare(kSelect);
    while (stmt.step()) out[stmt.columnInt(0)] = readRow(stmt);
    return out;
}

std::optional<HistoryStart> HistoryStartTable::read(const SqliteDb& db, std::int64_t runId) {
    if (!db.hasTable("history_start")) return std::nullopt;
    SqliteStatement stmt = db.prepare(std::string(kSelect) + " WHERE run = ?");
    stmt.bind(1, runId);
    if (!stmt.step()) return std::nullopt;
    return readRow(stmt);
}

}  // namespace allocscope::storage
