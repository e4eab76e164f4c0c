#include "storage/session/RunVerdictTable.h"

namespace allocscope::storage {
namespace {

constexpr const char* kCreateSql = R"SQL(
CREATE TABLE IF NOT EXISTS run_verdict (
    run INTEGER PRIMARY KEY REFERENCES run(id),
    kind TEXT NOT NULL,                 -- exact / diverged / what_if / simulated
    text TEXT NOT NULL,                 -- the full verdict line
    entry INTEGER                       -- diverged: the trace entry of the first difference
);
)SQL";

RunVerdict readRow(SqliteStatement& stmt) {
    RunVerdict verdict;
    const std::optional<VerdictKind> kind = verdictKindFromName(stmt.columnText(1));
    // An unknown kind (written by a newer build) must not pass for any verdict we know.
    if (!kind) return verdict;
    verdict.kind = *kind;
    verdict.text = stmt.columnText(2);
    if (!stmt.columnIsNull(3)) verdict.entry = static_cast<std::uint64_t>(stmt.columnInt(3));
    return verdict;
}

constexpr const char* kSelect = "SELECT run, kind, text, entry FROM run_verdict";

}  // namespace

void RunVerdictTable::createIfMissing(SqliteDb& db) { db.exec(kCreateSql); }

void RunVerdictTable::write(SqliteDb& db, std::int64_t runId, const RunVerdict& verdict) {
    createIfMissing(db);
    SqliteStatement stmt = db.prepare("INSERT OR REPLACE INTO run_verdict(run, kind, text, entry) VALUES (?, ?, ?, ?)");
    stmt.bind(1, runId).bind(2, std::string_view(verdictKindName(verdict.kind))).bind(3, std::string_view(verdict.text));
    if (verdict.entry) {
        stmt.bind(4, static_cast<std::int64_t>(*verdict.entry));
    } else {
        stmt.bindNull(4);
    }
    stmt.run();
}

std::map<std::int64_t, RunVerdict> RunVerdictTable::readAll(const SqliteDb& db) {
    std::map<std::int64_t, RunVerdict> out;
    if (!db.hasTable("run_verdict")) return out;
    SqliteStatement stmt = db.prepare(kSelect);
    while (stmt.step()) out[stmt.columnInt(0)] = readRow(stmt);
    return out;
}

RunVerdict RunVerdictTable::read(const SqliteDb& db, std::int64_t runId) {
    if (!db.hasTable("run_verdict")) return {};
    SqliteStatement stmt = db.prepare(std::string(kSelect) + " WHERE run = ?");
    stmt.bind(1, runId);
    if (!stmt.step()) return {};
    return readRow(stmt);
}

}  // namespace allocscope::storage
