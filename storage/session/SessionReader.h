#pragma once
// A read connection to a session file, opened read-only (nothing is ever written: no -wal,
// -shm or -journal appears beside the file) after checking that it is an intact session of
// this schema. Each reader has its own connection; use one per thread.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/StackTable.h"
#include "storage/session/SessionTypes.h"
#include "storage/session/SqliteDb.h"

namespace allocscope::storage {

class SessionReader {
public:
    // integrityCheck runs PRAGMA quick_check (reads every page: damaged files are refused at
    // once rather than at the first query that meets the damage).
    explicit SessionReader(const std::string& path, bool integrityCheck = true);

    const std::string& path() const { return db_.path(); }
    SqliteDb& db() { return db_; }

    std::vector<RunRow> runs();
    RunRow run(int number);  // SessionError if there is no such run
    std::map<std::string, std::string> metadata();

    // Events [first, first + count) of a run (fewer at its end).
    EventPage events(int run, std::uint64_t first, std::size_t count);
    // The frames of a stack id as the run's events carry it (empty for 0 or unknown ids).
    alloc::Stack stack(int run, std::uint32_t stackId);
    // The block that covers `address` at event `seq`: its alloc, free_requested and
    // free_completed events (as far as they happened in the run), size, stream and stack.
    BlockHistory blockHistory(int run, std::uint64_t address, std::uint64_t seq);
    // The statistics fixups of a run in (after, upto], in order.
    std::vector<std::pair<std::uint64_t, alloc::DeviceStats>> fixups(int run, std::uint64_t after, std::uint64_t upto);
    // The run's phases ordered by (firstSeq, depth); empty for a run without any.
    std::vector<PhaseSpan> phases(int run);
    // Initial stats of a run (before its first event).
    alloc::DeviceStats initialStats(int run);

    // A run's events as stored: calls fn(chunkFirstSeq, events) for every chunk overlapping
    // [first, last], in order; fn returns false to stop.
    template <typename Fn>
    void forEachChunk(int run, std::uint64_t first, std::uint64_t last, Fn&& fn);
    // The chunk holding `seq`: its first seq and decoded events (cached).
    const std::vector<alloc::Event>& chunkAt(int run, std::uint64_t seq, std::uint64_t& chunkFirst);

private:
    std::uint64_t chunkStart(int run, std::uint64_t seq);
    void decodeRow(SqliteStatement& stmt, std::vector<alloc::Event>& out);

    SqliteDb db_;
    int cachedRun_ = -1;
    std::uint64_t cachedFirst_ = 0;
    std::vector<alloc::Event> cached_;
};

template <typename Fn>
void SessionReader::forEachChunk(int run, std::uint64_t first, std::uint64_t last, Fn&& fn) {
    const std::uint64_t start = chunkStart(run, first);
    SqliteStatement stmt = db_.prepare(
        "SELECT first_seq, count, events FROM event_chunk WHERE run = ? AND first_seq >= ? AND first_seq <= ? ORDER BY first_seq");
    stmt.bind(1, static_cast<std::int64_t>(run)).bind(2, static_cast<std::int64_t>(start)).bind(3, static_cast<std::int64_t>(last));
    std::vector<alloc::Event> events;
    while (stmt.step()) {
        events.clear();
        decodeRow(stmt, events);
        if (!fn(static_cast<std::uint64_t>(stmt.columnInt(0)), static_cast<const std::vector<alloc::Event>&>(events))) break;
    }
}

}  // namespace allocscope::storage
