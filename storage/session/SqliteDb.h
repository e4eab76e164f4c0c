#pragma once
// RAII around one sqlite3 connection. Read connections of existing files open with
// SQLITE_OPEN_READONLY and, when no write-ahead log is beside the file, `immutable=1`, so that
// SQLite creates no -wal/-shm/-journal file and never writes a byte of the input.
#include <memory>
#include <string>
#include <string_view>

#include "storage/session/SqliteStatement.h"

struct sqlite3;

namespace allocscope::storage {

// How long a connection waits for a lock that another process holds without committing anything
// (see SqliteDb's busy handler): a writer waits as long as the others make progress, and gives
// up with a clear error only when the session stays locked and unchanged this long.
inline constexpr int kBusyPatienceSeconds = 30;

class SqliteDb {
public:
    enum class Mode { ReadOnly, ReadWriteCreate };

    SqliteDb();
    SqliteDb(const std::string& path, Mode mode);
    ~SqliteDb();
    SqliteDb(SqliteDb&& other) noexcept;
    SqliteDb& operator=(SqliteDb&& other) noexcept;
    SqliteDb(const SqliteDb&) = delete;
    SqliteDb& operator=(const SqliteDb&) = delete;

    bool isOpen() const { return db_ != nullptr; }
    const std::string& path() const { return path_; }
    sqlite3* handle() const { return db_; }

    void exec(std::string_view sql);
    SqliteStatement prepare(std::string_view sql) const { return SqliteStatement(db_, sql); }
    // A single integer from a query like "PRAGMA user_version".
    std::int64_t queryInt(std::string_view sql) const;
    // The file has this table (the optional tables are created by the first run that needs them).
    bool hasTable(std::string_view name) const;
    std::int64_t lastInsertRowId() const;
    // Attaches another session file, read-only, as schema `name` (merge reads its inputs this
    // way): immutable like a ReadOnly connection when no write-ahead log is beside it.
    void attachReadOnly(const std::string& path, std::string_view name);
    void close();

    struct BusyState;

private:
    sqlite3* db_ = nullptr;
    std::string path_;
    std::unique_ptr<BusyState> busy_;  // on the heap: the busy handler keeps its address
};

// The text of a failed SQLite call: "damaged" for corruption, the lock wait for SQLITE_BUSY.
std::string sqliteProblem(sqlite3* db, int rc);

// True when a file named path + suffix exists (the sidecars "-wal", "-shm", "-journal").
bool sidecarExists(const std::string& path, std::string_view suffix);

}  // namespace allocscope::storage
