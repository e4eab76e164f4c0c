#include "storage/session/SqliteDb.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
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

// What changes when any process commits into the file: its write-ahead log (or, after a
// checkpoint, the file itself) gets another size or modification time.
struct FileStamp {
    std::int64_t size = -1;
    std::int64_t mtimeNs = -1;
    bool operator==(const FileStamp&) const = default;
};

FileStamp stampOf(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    return {static_cast<std::int64_t>(st.st_size), static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace

// SQLite's own busy timeout counts from the first failed attempt, so with several processes
// recording into one session a writer could give up although the session is merely shared
// (others keep committing). This handler measures how long the session has been locked *and
// unchanged*: every commit by anyone restarts the clock; only a lock held for
// kBusyPatienceSeconds without any commit (a hung or stopped process) ends the wait.
struct SqliteDb::BusyState {
    std::string path;
    std::chrono::steady_clock::time_point since;
    FileStamp walStamp, fileStamp;

    static int handler(void* self, int attempt) {
        auto& state = *static_cast<BusyState*>(self);
        const auto now = std::chrono::steady_clock::now();
        const FileStamp walNow = stampOf(state.path + "-wal");
        const FileStamp fileNow = stampOf(state.path);
        if (attempt == 0 || !(walNow == state.walStamp) || !(fileNow == state.fileStamp)) {
            state.since = now;
            state.walStamp = walNow;
            state.fileStamp = fileNow;
        }
        if (now - state.since > std::chrono::seconds(kBusyPatienceSeconds)) return 0;
        // Short polls: a lock is handed over between two transactions of another writer.
        sqlite3_sleep(attempt < 8 ? 1 + attempt : 10);
        return 1;
    }
};

std::string sqliteProblem(sqlite3* db, int rc) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) message = "the session file is damaged: " + message;
    if (rc == SQLITE_BUSY) {
        message = "the session is locked by another process that has committed nothing for " +
                  std::to_string(kBusyPatienceSeconds) + " s (" + message + ")";
    }
    return message;
}

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
    busy_ = std::make_unique<BusyState>();
    busy_->path = std::filesystem::absolute(path).string();
    sqlite3_busy_handler(db_, &BusyState::handler, busy_.get());
}

SqliteDb::SqliteDb() = default;  // here, where BusyState is complete

SqliteDb::~SqliteDb() { close(); }

SqliteDb::SqliteDb(SqliteDb&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), busy_(std::move(other.busy_)) {
    other.db_ = nullptr;
}

SqliteDb& SqliteDb::operator=(SqliteDb&& other) noexcept {
    if (this != &other) {
        close();
        db_ = other.db_;
        path_ = std::move(other.path_);
        busy_ = std::move(other.busy_);
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
        sqlite3_free(error);
        throw SessionError(sqliteProblem(db_, rc), path_);
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

void SqliteDb::attachReadOnly(const std::string& path, std::string_view name) {
    std::string uri = fileUri(path, !sidecarExists(path, "-wal"));
    uri += uri.find('?') == std::string::npos ? "?mode=ro" : "&mode=ro";
    SqliteStatement attach = prepare("ATTACH DATABASE ? AS " + std::string(name));
    attach.bind(1, std::string_view(uri));
    try {
        attach.run();
    } catch (const SessionError& e) {
        throw SessionError(e.problem(), path);
    }
}

}  // namespace allocscope::storage
