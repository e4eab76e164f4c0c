#pragma once
// RAII around one sqlite3 connection. Read connections of existing files open with
// SQLITE_OPEN_READONLY and, when no write-ahead log is beside the file, `immutable=1`, so that
// SQLite creates no -wal/-shm/-journal file and never writes a byte of the input.
#include <string>
#include <string_view>

#include "storage/session/SqliteStatement.h"

struct sqlite3;

namespace allocscope::storage {

class SqliteDb {
public:
    enum class Mode { ReadOnly, ReadWriteCreate };

    SqliteDb() = default;
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
    void close();

private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

// True when a file named path + suffix exists (the sidecars "-wal", "-shm", "-journal").
bool sidecarExists(const std::string& path, std::string_view suffix);

}  // namespace allocscope::storage
