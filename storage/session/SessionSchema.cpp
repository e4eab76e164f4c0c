#include "storage/session/SessionSchema.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "storage/session/HeatmapQuery.h"
#include "storage/session/HeatmapRaster.h"
#include "storage/session/HeatmapTable.h"
#include "storage/session/SchemaVersion.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"

namespace allocscope::storage {
namespace {

// Version 1 (version 2 adds kPhaseSql below, version 3 replaces the heatmap table: kHeatmapSql). Events are stored in chunks (one BLOB per recorder batch, see EventCodec) because
// one row per event costs ~10x the space and write time; the timeline samples of a chunk sit
// beside it so that a timeline query never decodes events.
constexpr const char* kCreateSql = R"SQL(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE run (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    source_kind TEXT NOT NULL,          -- demo / snapshot / csv
    source TEXT NOT NULL,               -- workload + parameters, or the imported file
    config TEXT NOT NULL,
    gpu TEXT NOT NULL,
    total_memory INTEGER NOT NULL,
    memory_fraction REAL NOT NULL,
    status TEXT NOT NULL,               -- recording / complete / interrupted
    created_at TEXT NOT NULL,
    event_count INTEGER NOT NULL DEFAULT 0,
    keyframe_interval INTEGER NOT NULL,
    initial_stats BLOB NOT NULL,
    divergence TEXT NOT NULL DEFAULT ''
);
CREATE TABLE event_chunk (
    run INTEGER NOT NULL REFERENCES run(id),
    first_seq INTEGER NOT NULL,
    count INTEGER NOT NULL,
    first_op INTEGER NOT NULL,
    last_op INTEGER NOT NULL,
    start_allocated INTEGER NOT NULL,
    start_reserved INTEGER NOT NULL,
    start_active INTEGER NOT NULL,
    start_requested INTEGER NOT NULL,
    samples BLOB NOT NULL,              -- min/max of the four series per 64 events
    events BLOB NOT NULL,
    PRIMARY KEY (run, first_seq)
);
CREATE TABLE keyframe (
    run INTEGER NOT NULL REFERENCES run(id),
    seq INTEGER NOT NULL,               -- the state before event `seq`
    state BLOB NOT NULL,
    PRIMARY KEY (run, seq)
);
CREATE TABLE stats_fixup (
    run INTEGER NOT NULL REFERENCES run(id),
    after_count INTEGER NOT NULL,       -- applies once `after_count` events have happened
    stats BLOB NOT NULL,
    PRIMARY KEY (run, after_count)
);
CREATE TABLE frame (
    id INTEGER PRIMARY KEY,
    filename TEXT NOT NULL,
    line INTEGER NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (filename, line, name)
);
CREATE TABLE stack_key (
    id INTEGER PRIMARY KEY,
    frames BLOB NOT NULL UNIQUE         -- frame ids, varint-encoded, innermost first
);
CREATE TABLE run_stack (
    run INTEGER NOT NULL REFERENCES run(id),
    stack_id INTEGER NOT NULL,          -- the id events carry
    stack INTEGER NOT NULL REFERENCES stack_key(id),
    PRIMARY KEY (run, stack_id)
);
CREATE TABLE summary (
    run INTEGER PRIMARY KEY REFERENCES run(id),
    op_count INTEGER NOT NULL,
    peak_allocated INTEGER NOT NULL,
    peak_reserved INTEGER NOT NULL,
    peak_active INTEGER NOT NULL,
    peak_requested INTEGER NOT NULL,
    action_counts TEXT NOT NULL,
    num_ooms INTEGER NOT NULL,
    max_segments INTEGER NOT NULL,
    max_live_blocks INTEGER NOT NULL,
    max_inactive_split_bytes INTEGER NOT NULL,
    fragmentation_at_peak REAL NOT NULL,
    final_fragmentation REAL NOT NULL,
    final_stats BLOB NOT NULL
);
)SQL";

// Version 2: a run's named regions (PhaseSpan). IF NOT EXISTS: the migration of an older copy
// runs it too.
constexpr const char* kPhaseSql = R"SQL(
CREATE TABLE IF NOT EXISTS phase (
    run INTEGER NOT NULL REFERENCES run(id),
    ordinal INTEGER NOT NULL,
    name TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    first_op INTEGER NOT NULL,
    last_op INTEGER NOT NULL,
    PRIMARY KEY (run, ordinal)
);
)SQL";

// Version 3: the heatmap keeps five share planes (HeatmapTable) instead of version 2's active and
// reserved shares.
constexpr const char* kHeatmapSql = R"SQL(
CREATE TABLE heatmap (
    run INTEGER PRIMARY KEY REFERENCES run(id),
    columns INTEGER NOT NULL,
    rows INTEGER NOT NULL,
    column_events BLOB NOT NULL,
    axis BLOB NOT NULL,
    shares BLOB NOT NULL
);
)SQL";

constexpr std::array<const char*, 11> kTables = {"meta",     "run",       "event_chunk", "keyframe", "stats_fixup",
                                                 "frame",    "stack_key", "run_stack",   "heatmap",  "summary",
                                                 "phase"};

// What another process's commit changes: whether a log is beside the file, the file's size
// and modification time (a checkpoint).
struct FileState {
    bool log = false;
    std::uintmax_t size = 0;
    std::filesystem::file_time_type time{};
    bool operator==(const FileState&) const = default;
};

FileState fileState(const std::string& path) {
    std::error_code ec;
    FileState state;
    state.log = sidecarExists(path, "-wal");
    state.size = std::filesystem::file_size(path, ec);
    state.time = std::filesystem::last_write_time(path, ec);
    return state;
}

}  // namespace

void SessionSchema::checkIntact(const std::string& path) {
    checkFileHeader(path);
    const FileState before = fileState(path);
    try {
        SqliteDb check(path, SqliteDb::Mode::ReadOnly);
        validate(check, true);
    } catch (const SessionError&) {
        if (before.log || fileState(path) == before) throw;  // it took locks, or nothing moved
        SqliteDb check(path, SqliteDb::Mode::ReadOnly);
        validate(check, true);
    }
}

void SessionSchema::create(SqliteDb& db) {
    db.exec("BEGIN EXCLUSIVE");
    db.exec(kCreateSql);
    db.exec(kPhaseSql);
    db.exec(kHeatmapSql);
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    db.exec("INSERT INTO meta(key, value) VALUES ('application', 'AllocScope session')");
    db.exec("COMMIT");
}

void SessionSchema::checkFileHeader(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw SessionError("no such session file", path);
    if (std::filesystem::is_directory(path, ec)) throw SessionError("is a directory, not a session file", path);
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) throw SessionError("cannot read the session file: " + ec.message(), path);
    if (size == 0) throw SessionError("empty file, not an AllocScope session", path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw SessionError("cannot read the session file", path);
    char header[100] = {};
    in.read(header, sizeof header);
    if (in.gcount() < 16 || std::memcmp(header, "SQLite format 3", 16) != 0) {
        throw SessionError("not an AllocScope session (not a SQLite database)", path);
    }
    if (in.gcount() < 100) throw SessionError("the session file is damaged: truncated header", path);
}

std::int64_t SessionSchema::storedVersion(const std::string& path) {
    checkFileHeader(path);
    std::int64_t appId = 0;
    std::int64_t version = 0;
    try {
        SqliteDb db(path, SqliteDb::Mode::ReadOnly);
        appId = db.queryInt("PRAGMA application_id");
        version = db.queryInt("PRAGMA user_version");
    } catch (const SessionError& e) {
        throw SessionError("not an AllocScope session or damaged: " + e.problem(), path);
    }
    if (appId != kApplicationId) {
        throw SessionError("not an AllocScope session (a SQLite database of another application)", path);
    }
    return version;
}

void SessionSchema::validate(SqliteDb& db, bool integrityCheck) {
    const std::string& path = db.path();
    std::int64_t appId = 0;
    try {
        appId = db.queryInt("PRAGMA application_id");
    } catch (const SessionError& e) {
        throw SessionError("not an AllocScope session or damaged: " + e.problem(), path);
    }
    if (appId != kApplicationId) {
        throw SessionError("not an AllocScope session (a SQLite database of another application)", path);
    }
    const std::int64_t version = db.queryInt("PRAGMA user_version");
    if (version > kSchemaVersion) {
        throw SessionError("session written by a newer AllocScope (schema " + std::to_string(version) +
                               ", this build reads up to " + std::to_string(kSchemaVersion) + ")",
                           path);
    }
    if (version < kSchemaVersion) {
        throw SessionError("session has the older schema " + std::to_string(version) +
                               "; migrate it into a copy (schema " + std::to_string(kSchemaVersion) +
                               "): allocscope-cli migrate OLD NEW, or open it in the app",
                           path);
    }
    if (integrityCheck) {
        SqliteStatement check = db.prepare("PRAGMA quick_check");
        std::string verdict;
        try {
            if (check.step()) verdict = check.columnText(0);
        } catch (const SessionError& e) {
            throw SessionError(e.problem(), path);
        }
        if (verdict != "ok") {
            // quick_check lists every problem, one per line; the first real one says enough.
            std::string first;
            std::size_t pos = 0;
            while (pos < verdict.size() && (first.empty() || first.rfind("***", 0) == 0)) {
                const std::size_t end = std::min(verdict.find('\n', pos), verdict.size());
                first = verdict.substr(pos, end - pos);
                pos = end + 1;
            }
            throw SessionError("the session file is damaged: " + first, path);
        }
    }
    for (const char* table : kTables) {
        if (!db.hasTable(table)) {
            throw SessionError(std::string("the session file is damaged: table '") + table + "' is missing", path);
        }
    }
    // Every row that names a run must name an existing one, and every run must have all its
    // event chunks (contiguous from 0 to event_count) and, once complete, its summary and heatmap.
    SqliteStatement orphans = db.prepare(
        "SELECT 'event_chunk', run FROM event_chunk WHERE run NOT IN (SELECT id FROM run) "
        "UNION ALL SELECT 'keyframe', run FROM keyframe WHERE run NOT IN (SELECT id FROM run) "
        "UNION ALL SELECT 'summary', run FROM summary WHERE run NOT IN (SELECT id FROM run) "
        "UNION ALL SELECT 'phase', run FROM phase WHERE run NOT IN (SELECT id FROM run) "
        "UNION ALL SELECT 'run_stack', run FROM run_stack WHERE stack NOT IN (SELECT id FROM stack_key) LIMIT 1");
    if (orphans.step()) {
        throw SessionError("the session file is damaged: " + orphans.columnText(0) + " rows of run " +
                               std::to_string(orphans.columnInt(1)) + " reference missing rows",
                           path);
    }
    SqliteStatement runs = db.prepare(
        "SELECT r.id, r.status, r.event_count, "
        "  (SELECT coalesce(sum(count), 0) FROM event_chunk c WHERE c.run = r.id), "
        "  (SELECT coalesce(max(first_seq + count), 0) FROM event_chunk c WHERE c.run = r.id), "
        "  (SELECT count(*) FROM keyframe k WHERE k.run = r.id AND k.seq = 0), "
        "  (SELECT count(*) FROM summary s WHERE s.run = r.id), "
        "  (SELECT count(*) FROM heatmap h WHERE h.run = r.id) FROM run r ORDER BY r.id");
    while (runs.step()) {
        const std::string where = path + ", run " + std::to_string(runs.columnInt(0));
        const std::string status = runs.columnText(1);
        const std::int64_t count = runs.columnInt(2);
        if (status != "complete" && status != "recording" && status != "interrupted") {
            throw SessionError("the session file is damaged: unknown run status '" + status + "'", where);
        }
        if (runs.columnInt(5) != 1) throw SessionError("the session file is damaged: the run's first keyframe is missing", where);
        // A recording that was killed may have fewer committed events than its row says: the
        // chunks are the truth then. A complete run must have exactly its events.
        if (runs.columnInt(3) != runs.columnInt(4) || (status == "complete" && runs.columnInt(3) != count)) {
            throw SessionError("the session file is damaged: the run references " + std::to_string(count) +
                                   " events but " + std::to_string(runs.columnInt(3)) + " are stored",
                               where);
        }
        if (status == "complete" && (runs.columnInt(6) != 1 || runs.columnInt(7) != 1)) {
            throw SessionError("the session file is damaged: the run's summary or heatmap row is missing", where);
        }
    }
}

std::size_t SessionSchema::migrateToCopy(const std::string& source, const std::string& target, const Progress& progress) {
    // The copy is made through SQLite (never a byte copy of a possibly hot file); the upgrade
    // steps then run on the copy only.
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(target, ec))) {
        throw SessionError("the migration target already exists", target);
    }
    const std::int64_t version = storedVersion(source);
    if (version > kSchemaVersion) throw SessionError("session written by a newer AllocScope", source);
    try {
        {
            SqliteDb in(source, SqliteDb::Mode::ReadOnly);
            SqliteStatement vacuum = in.prepare("VACUUM INTO ?");
            vacuum.bind(1, std::string_view(target));
            vacuum.run();
        }
        upgradeCopy(target, version, progress);
        // The copy is kept only when it opens as an intact session of this build, every page read.
        SessionReader check(target, true);
        return check.runs().size();
    } catch (...) {
        // A partial or half-upgraded copy is worth nothing and would be refused or mislead.
        for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::filesystem::remove(target + suffix, ec);
        throw;
    }
}

void SessionSchema::upgradeCopy(const std::string& target, std::int64_t version, const Progress& progress) {
    // Upgrade steps from `version` to kSchemaVersion, on the copy only, in one transaction.
    {
        SqliteDb out(target, SqliteDb::Mode::ReadWriteCreate);
        out.exec("BEGIN");
        if (version < 2) out.exec(kPhaseSql);  // 1 -> 2: phases (none known for older runs)
        if (version < 3) {
            // 2 -> 3: the new heatmap table keeps each run's columns and axis; its shares are
            // recomputed below by replaying the run (the old active / reserved shares cannot
            // tell rounding waste or pending frees apart).
            out.exec("ALTER TABLE heatmap RENAME TO heatmap_v2");
            out.exec(kHeatmapSql);
            out.exec("INSERT INTO heatmap(run, columns, rows, column_events, axis, shares) "
                     "SELECT run, columns, rows, column_events, axis, x'' FROM heatmap_v2");
            out.exec("DROP TABLE heatmap_v2");
        }
        out.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
        out.exec("COMMIT");
    }
    if (version >= 3) return;
    std::vector<std::pair<int, HeatmapGrid>> grids;
    {
        SessionReader reader(target, false);
        const std::vector<RunRow> runs = reader.runs();
        std::uint64_t total = 0, before = 0;
        for (const RunRow& run : runs) total += run.eventCount;
        bool cancelled = false;
        for (const RunRow& run : runs) {
            const std::optional<HeatmapGrid> layout = HeatmapTable::read(reader.db(), run.number, true);
            if (!layout) {  // runs that never completed have no heatmap
                before += run.eventCount;
                continue;
            }
            std::vector<std::uint64_t> seqs = layout->columnEvents;
            if (!std::is_sorted(seqs.begin(), seqs.end()) || (!seqs.empty() && seqs.back() >= run.eventCount)) {
                throw SessionError("the session file is damaged: the heatmap of run " + std::to_string(run.number) +
                                       " samples events the run does not have",
                                   target);
            }
            std::vector<std::pair<std::uint64_t, std::uint64_t>> axis;
            for (const AxisRange& r : layout->axis) axis.emplace_back(r.address, r.address + r.size);
            auto samples = HeatmapQuery::sampleAt(reader, run.number, seqs, [&](std::uint64_t seq) {
                cancelled = progress && !progress(before + seq + 1, total);
                return !cancelled;
            });
            if (cancelled) throw SessionError("the migration was cancelled; the copy was removed", target);
            grids.emplace_back(run.number, HeatmapRaster::rasterize(samples, layout->rows, &axis));
            before += run.eventCount;
            if (progress && !progress(before, total)) throw SessionError("the migration was cancelled; the copy was removed", target);
        }
    }
    SqliteDb out(target, SqliteDb::Mode::ReadWriteCreate);
    out.exec("BEGIN");
    for (const auto& [run, grid] : grids) HeatmapTable::write(out, run, grid);
    out.exec("COMMIT");
}

}  // namespace allocscope::storage
