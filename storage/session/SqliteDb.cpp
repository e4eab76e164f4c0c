#include "storage/session/SqliteDb.h"

#include <sqlite3.h>

#include <filesystem>

#include "storage/session/SessionError.h"

namespace allocscope::storage {
namespace {

// A URI for sqlite3_open_v2: percent-encode what would otherwise be read as URI syntax.
std::string fileUri(const std::string& path, bool immutable) {
    std::string absolute = std::filesystem::absolute(path).string();
    std::string uri = "file:";
    static const char* hex = "0123456789ABCDEF";
    for (unsigned char c : absolute) {
        if (c == '?' || c == '#' || c == '%' || c < 0x21 || c >= 0x7f) {
            uri += '%';
            uri += hex[c >> 4];
            uri += hex[c & 15];
        } else {
            uri += static_cast<char>(c);
        }
    }
    if (immutable) uri += "?immutable=1";
    return uri;
}

}  // namespace

bool sidecarExists(const std::string& path, std::string_view suffix) {
    std::error_code ec;
    return std::filesystem::exists(path + std::string(suffix), ec);
}

SqliteDb::SqliteDb(const std::string& path, Mode mode) : path_(path) {
    int flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    std::string uri;
    if (mode == Mode::ReadOnly) {
        flags |= SQLITE_OPEN_READONLY;
        // A hot WAL beside the file (a recording that is running, or was killed) holds
        // committed transactions: read through it. Otherwise open immutable, which creates
        // no sidecar at all.
        uri = fileUri(path, !sidecarExists(path, "-wal"));
    } else {
        flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
        uri = fileUri(path, false);
    }
    const int rc = sqlite3_open_v2(uri.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw SessionError("cannot open the session: " + message, path);
    }
    sqlite3_extended_result_codes(db_, 0);
    sqlite3_busy_timeout(db_, 5000);
}

SqliteDb::~SqliteDb() { close(); }

SqliteDb::SqliteDb(SqliteDb&& other) noexcept : db_(other.db_), path_(std::move(other.path_)) {
    other.db_ = nullptr;
}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
    if (this != &other) {
        close();
        db_ = other.db_;
        path_ = std::move(other.path_);
        other.db_ = nullptr;
    }
    return *this;
}

void SqliteDb::close() {
    if (db_ != nullptr) {
        sqlite3_close_v2(db_);
        db_ = nullptr;
    }
}

void SqliteDb::exec(std::string_view sql) {
    char* error = nullptr;
    const std::string text(sql);
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
        std::string message = error != nullptr ? error : sqlite3_errmsg(db_);
        sqlite3_free(error);
        if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) message = "the session file is damaged: " + message;
        throw SessionError(message, path_);
    }
}

std::int64_t SqliteDb::queryInt(std::string_view sql) const {
    SqliteStatement stmt = prepare(sql);
    return stmt.step() ? stmt.columnInt(0) : 0;
}

bool SqliteDb::hasTable(std::string_view name) const {
    SqliteStatement stmt = prepare("SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?");
    stmt.bind(1, name);
    return stmt.step() && stmt.columnInt(0) == 1;
}

std::int64_t SqliteDb::lastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

}  // namespace allocscope::storage
