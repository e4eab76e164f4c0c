#pragma once
// The tables of a session file and the checks that a file really is an intact AllocScope
// session before anything reads it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class SessionSchema {
public:
    // Creates every table of the current schema in an empty database (one transaction).
    static void create(SqliteDb& db);
    // Throws SessionError with a clear message if the open database is not an AllocScope
    // session, is newer than this build, is older (needs a migration into a copy), is damaged,
    // or has runs whose rows are missing. Reads only.
    static void validate(SqliteDb& db, bool integrityCheck = true);
    // checkFileHeader and validate (every page) through a read-only connection, for a file that
    // other processes may be writing: a connection opened while no -wal is beside the file is
    // immutable (no locks), so if a writer appeared or checkpointed into the file while it read,
    // a failure may come from torn pages and the check is repeated once through a fresh
    // connection. Throws SessionError like validate.
    static void checkIntact(const std::string& path);
    // Checks the first bytes of a file before SQLite sees it (empty, not SQLite at all).
    static void checkFileHeader(const std::string& path);
    // The schema version a session file was written with, read-only and before any other check
    // (so older and newer files can be told apart). Throws SessionError when the file is not an
    // AllocScope session at all (missing, empty, not SQLite, another application's database).
    static std::int64_t storedVersion(const std::string& path);
    // Copies an older session into `target` and upgrades the copy to kSchemaVersion.
    // (done, total) in events replayed; false cancels the migration.
    using Progress = std::function<bool(std::uint64_t done, std::uint64_t total)>;
    // The source is only read; `target` must not exist. Steps that rebuild derived data (2 -> 3:
    // heatmaps) replay every run and report progress on the way. The copy is kept only when it
    // then opens as an intact session (every page checked); returns its number of runs. A failed
    // or cancelled migration throws SessionError and leaves nothing at `target`.
    static std::size_t migrateToCopy(const std::string& source, const std::string& target, const Progress& progress = {});

private:
    static void upgradeCopy(const std::string& target, std::int64_t version, const Progress& progress);
};

}  // namespace allocscope::storage
