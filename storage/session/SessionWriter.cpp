#include "storage/session/SessionWriter.h"

#include <filesystem>

#include "storage/session/NewSessionFile.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionSchema.h"

namespace allocscope::storage {

SessionWriter::SessionWriter(const std::string& path, std::size_t queueCapacity)
    : path_(path), capacity_(queueCapacity == 0 ? 1 : queueCapacity) {
    std::error_code ec;
    // A new session appears complete or not at all (NewSessionFile); when another process
    // created it first, this one records into that file like into any existing session.
    const bool created = !std::filesystem::exists(std::filesystem::symlink_status(path, ec)) && NewSessionFile(path).publish();
    // An existing file is checked through a read-only connection first: a file we refuse stays
    // byte-identical.
    if (!created) SessionSchema::checkIntact(path);
    db_ = SqliteDb(path, SqliteDb::Mode::ReadWriteCreate);
    db_.exec("PRAGMA journal_mode = WAL");
    // NORMAL in WAL mode: a killed process loses nothing committed; only a power cut may lose
    // the last transactions (never the file's consistency).
    db_.exec("PRAGMA synchronous = NORMAL");
    db_.exec("PRAGMA cache_size = -65536");
    thread_ = std::thread([this] { loop(); });
}

SessionWriter::~SessionWriter() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
    db_.close();
}

void SessionWriter::throwIfFailed() {
    if (!errorWhat_.empty()) throw SessionError(errorWhat_, errorWhere_);
}

void SessionWriter::submit(Task task) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return queue_.size() < capacity_ || !errorWhat_.empty(); });
    throwIfFailed();
    queue_.push_back(std::move(task));
    ++submitted_;
    changed_.notify_all();
}

void SessionWriter::flush() {
    std::unique_lock lock(mutex_);
    const std::uint64_t target = submitted_;
    changed_.wait(lock, [&] { return committed_ >= target || !errorWhat_.empty(); });
    throwIfFailed();
}

void SessionWriter::loop() {
    std::vector<std::function<void()>> afterCommit;
    for (;;) {
        std::deque<Task> work;
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [this] { return !queue_.empty() || stopping_; });
            if (queue_.empty() && stopping_) return;
            work.swap(queue_);
        }
        changed_.notify_all();  // producers waiting for room
        const std::uint64_t count = work.size();
        try {
            if (!errorWhat_.empty()) throw SessionError(errorWhat_, errorWhere_);
            afterCommit.clear();
            Context context{db_, afterCommit};
            // IMMEDIATE: the write lock is taken (waiting for other processes as SqliteDb's busy
            // handler allows) before anything is read, so no transaction can fail half-way for
            // a snapshot that another process's commit made stale, and a new run's number
            // (max + 1) is decided under the lock by the transaction that makes it visible.
            db_.exec("BEGIN IMMEDIATE");
            try {
                for (Task& task : work) task(context);
                db_.exec("COMMIT");
            } catch (...) {
                try {
                    db_.exec("ROLLBACK");
                } catch (...) {
                }
                throw;
            }
            for (auto& callback : afterCommit) callback();
        } catch (const SessionError& e) {
            std::lock_guard lock(mutex_);
            if (errorWhat_.empty()) {
                errorWhat_ = e.problem();
                errorWhere_ = e.where();
            }
        } catch (const std::exception& e) {
            std::lock_guard lock(mutex_);
            if (errorWhat_.empty()) {
                errorWhat_ = std::string("recording failed: ") + e.what();
                errorWhere_ = path_;
            }
        }
        {
            std::lock_guard lock(mutex_);
            committed_ += count;
        }
        changed_.notify_all();
    }
}

}  // namespace allocscope::storage
