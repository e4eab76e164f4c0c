#include "storage/session/RunRankTable.h"

namespace allocscope::storage {
namespace {

constexpr const char* kCreateSql = R"SQL(
CREATE TABLE IF NOT EXISTS run_rank (
    run INTEGER PRIMARY KEY REFERENCES run(id),
    rank INTEGER NOT NULL,
    source TEXT NOT NULL                -- where the rank was found: 'file name' / 'user_metadata'
);
)SQL";

constexpr const char* kSelect = "SELECT run, rank, source FROM run_rank";

RunRank readRow(SqliteStatement& stmt) { return RunRank{static_cast<int>(stmt.columnInt(1)), stmt.columnText(2)}; }

}  // namespace

void RunRankTable::write(SqliteDb& db, std::int64_t runId, const RunRank& rank) {
    db.exec(kCreateSql);
    SqliteStatement stmt = db.prepare("INSERT OR REPLACE INTO run_rank(run, rank, source) VALUES (?, ?, ?)");
    stmt.bind(1, runId).bind(2, static_cast<std::int64_t>(rank.rank)).bind(3, std::string_view(rank.source));
    stmt.run();
}

std::map<std::int64_t, RunRank> RunRankTable::readAll(const SqliteDb& db) {
    std::map<std::int64_t, RunRank> out;
    if (!db.hasTable("run_rank")) return out;
    SqliteStatement stmt = db.prepare(kSelect);
    while (stmt.step()) out[stmt.columnInt(0)] = readRow(stmt);
    return out;
}

std::optional<RunRank> RunRankTable::read(const SqliteDb& db, std::int64_t runId) {
    if (!db.hasTable("run_rank")) return std::nullopt;
    SqliteStatement stmt = db.prepare(std::string(kSelect) + " WHERE run = ?");
    stmt.bind(1, runId);
    if (!stmt.step()) return std::nullopt;
    return readRow(stmt);
}

}  // namespace allocscope::storage
