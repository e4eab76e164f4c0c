#include "storage/session/SqliteStatement.h"

#include <sqlite3.h>

#include "storage/session/SessionError.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {
namespace {
std::string dbName(sqlite3* db) {
    const char* name = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
    return name != nullptr && *name != '\0' ? std::string(name) : std::string("session database");
}
}  // namespace

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql) : db_(db) {
    const int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
    if (rc != SQLITE_OK) fail(rc);
}

SqliteStatement::~SqliteStatement() {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
}

void SqliteStatement::fail(int rc) const {
    throw SessionError(sqliteProblem(db_, rc), dbName(db_));
}

SqliteStatement& SqliteStatement::bind(int index, std::int64_t value) {
    const int rc = sqlite3_bind_int64(stmt_, index, value);
    if (rc != SQLITE_OK) fail(rc);
    return *this;
}

SqliteStatement& SqliteStatement::bind(int index, double value) {
    const int rc = sqlite3_bind_double(stmt_, index, value);
    if (rc != SQLITE_OK) fail(rc);
    return *this;
}

SqliteStatement& SqliteStatement::bind(int index, std::string_view text) {
    const int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK) fail(rc);
    return *this;
}

SqliteStatement& SqliteStatement::bindBlob(int index, const void* data, std::size_t size) {
    const int rc = sqlite3_bind_blob64(stmt_, index, size == 0 ? "" : data, size, SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) fail(rc);
    return *this;
}

SqliteStatement& SqliteStatement::bindBlobStatic(int index, const void* data, std::size_t size) {
    const int rc = sqlite3_bind_blob64(stmt_, index, size == 0 ? "" : data, size, SQLITE_STATIC);
    if (rc != SQLITE_OK) fail(rc);
    return *this;
}

SqliteStatement& SqliteStatement::bindNull(int index) {
    const int rc = sqlite3_bind_null(stmt_, index);
    if (rc != SQLITE_OK) fail(rc);
    return *this;
}

bool SqliteStatement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite3_reset(stmt_);
    fail(rc);
}

void SqliteStatement::run() {
    while (step()) {
    }
    reset();
}

void SqliteStatement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

std::int64_t SqliteStatement::columnInt(int index) const { return sqlite3_column_int64(stmt_, index); }
double SqliteStatement::columnDouble(int index) const { return sqlite3_column_double(stmt_, index); }

std::string SqliteStatement::columnText(int index) const {
    const unsigned char* text = sqlite3_column_text(stmt_, index);
    const int size = sqlite3_column_bytes(stmt_, index);
    return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

std::string_view SqliteStatement::columnBlob(int index) const {
    const void* data = sqlite3_column_blob(stmt_, index);
    const int size = sqlite3_column_bytes(stmt_, index);
    return data == nullptr ? std::string_view() : std::string_view(static_cast<const char*>(data), static_cast<std::size_t>(size));
}

bool SqliteStatement::columnIsNull(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }

}  // namespace allocscope::storage
