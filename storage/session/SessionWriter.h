#pragma once
// The one writer of an open session: a thread that owns the write connection. Runs (even
// parallel ones) hand it work through a bounded queue, so a fast producer waits instead of
// growing memory; everything queued when the thread wakes is committed in one transaction.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class SessionWriter {
public:
    // What a task sees on the writer thread.
    struct Context {
        SqliteDb& db;
        std::vector<std::function<void()>>& afterCommit;  // run once the transaction committed
    };
    using Task = std::function<void(Context&)>;

    // Creates the session file if it does not exist; otherwise checks that it is an intact
    // session of this schema (SessionError if not, the file untouched) and opens it for writing.
    // `queueCapacity`: tasks queued before submit() blocks. A recording's task is a batch of
    // 4,096 events (SessionRecorder), so 64 hold about a quarter of a million events (~15 ms of
    // a big import, ~30 MB): room for the replay and the writer to outrun each other for a
    // while, where 8 made each wait for the other (the 1 GB import ~10% slower;
    // tests/benchmarks/README.md, "Tenth round").
    explicit SessionWriter(const std::string& path, std::size_t queueCapacity = 64);
    ~SessionWriter();  // commits what is queued, then closes (no -wal/-shm left behind)
    SessionWriter(const SessionWriter&) = delete;
    SessionWriter& operator=(const SessionWriter&) = delete;

    const std::string& path() const { return path_; }
    // Queues a task; blocks while the queue is full. Throws SessionError once the writer failed.
    void submit(Task task);
    // Waits until every task submitted so far is committed; rethrows the writer's error.
    void flush();

private:
    void loop();
    void throwIfFailed();

    std::string path_;
    std::size_t capacity_;
    SqliteDb db_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Task> queue_;
    std::uint64_t submitted_ = 0;
    std::uint64_t committed_ = 0;
    bool stopping_ = false;
    std::string errorWhat_;
    std::string errorWhere_;
    std::thread thread_;
};

}  // namespace allocscope::storage
