#pragma once
// RAII around sqlite3_stmt: prepared once, reset and re-bound for every row. Errors throw
// SessionError naming the SQL's database file.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace allocscope::storage {

class SqliteStatement {
public:
    SqliteStatement(sqlite3* db, std::string_view sql);
    ~SqliteStatement();
    SqliteStatement(SqliteStatement&& other) noexcept;
    SqliteStatement& operator=(SqliteStatement&&) = delete;
    SqliteStatement(const SqliteStatement&) = delete;
    SqliteStatement& operator=(const SqliteStatement&) = delete;

    // Binding is 1-based, as in sqlite3_bind_*. Text and blobs are copied (SQLITE_TRANSIENT)
    // unless bindBlobStatic is used, whose data must live until the next step()/reset().
    SqliteStatement& bind(int index, std::int64_t value);
    SqliteStatement& bind(int index, double value);
    SqliteStatement& bind(int index, std::string_view text);
    SqliteStatement& bindBlob(int index, const void* data, std::size_t size);
    SqliteStatement& bindBlobStatic(int index, const void* data, std::size_t size);
    SqliteStatement& bindNull(int index);

    // true: a row is available; false: done. Throws on errors (corruption included).
    bool step();
    // step() that must complete without a row (INSERT, UPDATE...); then reset().
    void run();
    void reset();

    std::int64_t columnInt(int index) const;
    double columnDouble(int index) const;
    std::string columnText(int index) const;
    // A view of the column's bytes: valid until the next step()/reset().
    std::string_view columnBlob(int index) const;
    bool columnIsNull(int index) const;

private:
    [[noreturn]] void fail(int rc) const;
    sqlite3* db_ = nullptr;
    sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace allocscope::storage
