#include "storage/session/SessionReader.h"

#include "storage/session/ByteCodec.h"
#include "storage/session/EventCodec.h"
#include "storage/session/HistoryStartTable.h"
#include "storage/session/RunRankTable.h"
#include "storage/session/RunVerdictTable.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionSchema.h"
#include "storage/session/StateCodec.h"
#include "storage/session/StateCursor.h"

namespace allocscope::storage {
namespace {

RunSummary readSummary(SqliteStatement& s, int col) {
    RunSummary summary;
    summary.opCount = static_cast<std::uint64_t>(s.columnInt(col));
    summary.peakAllocated = s.columnInt(col + 1);
    summary.peakReserved = s.columnInt(col + 2);
    summary.peakActive = s.columnInt(col + 3);
    summary.peakRequested = s.columnInt(col + 4);
    const std::string counts = s.columnText(col + 5);
    summary.actionCounts.assign(alloc::kEventActionCount, 0);
    std::size_t pos = 0;
    while (pos < counts.size()) {
        const std::size_t comma = std::min(counts.find(',', pos), counts.size());
        const std::string item = counts.substr(pos, comma - pos);
        const std::size_t eq = item.find('=');
        if (eq != std::string::npos) {
            if (auto action = alloc::actionFromName(item.substr(0, eq))) {
                summary.actionCounts[static_cast<std::size_t>(*action)] = std::stoull(item.substr(eq + 1));
            }
        }
        pos = comma + 1;
    }
    summary.numOoms = s.columnInt(col + 6);
    summary.maxSegments = s.columnInt(col + 7);
    summary.maxLiveBlocks = s.columnInt(col + 8);
    summary.maxInactiveSplitBytes = s.columnInt(col + 9);
    summary.fragmentationAtPeak = s.columnDouble(col + 10);
    summary.finalFragmentation = s.columnDouble(col + 11);
    summary.finalStats = StateCodec::decodeStats(s.columnBlob(col + 12));
    return summary;
}

constexpr const char* kRunSelect =
    "SELECT r.id, r.name, r.source_kind, r.source, r.config, r.gpu, r.total_memory, r.memory_fraction, r.status, "
    "r.created_at, (SELECT coalesce(sum(count), 0) FROM event_chunk c WHERE c.run = r.id), r.divergence, s.run, "
    "s.op_count, s.peak_allocated, s.peak_reserved, s.peak_active, s.peak_requested, s.action_counts, s.num_ooms, "
    "s.max_segments, s.max_live_blocks, s.max_inactive_split_bytes, s.fragmentation_at_peak, s.final_fragmentation, "
    "s.final_stats FROM run r LEFT JOIN summary s ON s.run = r.id";

RunRow readRun(SqliteStatement& s) {
    RunRow row;
    row.number = static_cast<int>(s.columnInt(0));
    row.info.name = s.columnText(1);
    row.info.sourceKind = s.columnText(2);
    row.info.source = s.columnText(3);
    row.info.config = s.columnText(4);
    row.info.gpu = s.columnText(5);
    row.info.totalMemory = static_cast<std::uint64_t>(s.columnInt(6));
    row.info.memoryFraction = s.columnDouble(7);
    const std::string status = s.columnText(8);
    // "recording" in a file we only read: the recording stopped without finishing (a crash, a
    // kill, a power cut), or runs in another process right now; either way not complete
    // (RunProgress tells the two apart for a reader that watches the run grow).
    row.status = status == "complete" ? RunStatus::Complete : RunStatus::Interrupted;
    row.createdAt = s.columnText(9);
    row.eventCount = static_cast<std::uint64_t>(s.columnInt(10));
    row.divergence = s.columnText(11);
    if (!s.columnIsNull(12)) row.summary = readSummary(s, 13);
    return row;
}

}  // namespace

SessionReader::SessionReader(const std::string& path, bool integrityCheck) {
    SessionSchema::checkFileHeader(path);
    db_ = SqliteDb(path, SqliteDb::Mode::ReadOnly);
    SessionSchema::validate(db_, integrityCheck);
}

std::vector<RunRow> SessionReader::runs() {
    SqliteStatement s = db_.prepare(std::string(kRunSelect) + " ORDER BY r.id");
    std::vector<RunRow> out;
    const std::map<std::int64_t, HistoryStart> starts = HistoryStartTable::readAll(db_);
    const std::map<std::int64_t, RunVerdict> verdicts = RunVerdictTable::readAll(db_);
    const std::map<std::int64_t, RunRank> ranks = RunRankTable::readAll(db_);
    while (s.step()) {
        out.push_back(readRun(s));
        const auto start = starts.find(out.back().number);
        if (start != starts.end()) out.back().historyStart = start->second;
        const auto verdict = verdicts.find(out.back().number);
        if (verdict != verdicts.end()) out.back().verdict = verdict->second;
        const auto rank = ranks.find(out.back().number);
        if (rank != ranks.end()) out.back().rank = rank->second;
    }
    return out;
}

RunRow SessionReader::run(int number) {
    SqliteStatement s = db_.prepare(std::string(kRunSelect) + " WHERE r.id = ?");
    s.bind(1, static_cast<std::int64_t>(number));
    if (!s.step()) throw SessionError("no run " + std::to_string(number) + " in this session", path());
    RunRow row = readRun(s);
    row.historyStart = HistoryStartTable::read(db_, number);
    row.verdict = RunVerdictTable::read(db_, number);
    row.rank = RunRankTable::read(db_, number);
    return row;
}

std::map<std::string, std::string> SessionReader::metadata() {
    std::map<std::string, std::string> out;
    SqliteStatement s = db_.prepare("SELECT key, value FROM meta ORDER BY key");
    while (s.step()) out[s.columnText(0)] = s.columnText(1);
    return out;
}

std::uint64_t SessionReader::chunkStart(int run, std::uint64_t seq) {
    SqliteStatement s = db_.prepare("SELECT max(first_seq) FROM event_chunk WHERE run = ? AND first_seq <= ?");
    s.bind(1, static_cast<std::int64_t>(run)).bind(2, static_cast<std::int64_t>(seq));
    return s.step() && !s.columnIsNull(0) ? static_cast<std::uint64_t>(s.columnInt(0)) : 0;
}

void SessionReader::decodeRow(SqliteStatement& stmt, std::vector<alloc::Event>& out) {
    const auto first = static_cast<std::uint64_t>(stmt.columnInt(0));
    const auto count = stmt.columnInt(1);
    if (count < 0 || count > (1 << 24)) {
        throw SessionError("the session file is damaged: an event chunk has an impossible size", path());
    }
    EventCodec::decode(stmt.columnBlob(2), first, static_cast<std::size_t>(count), out);
}

const std::vector<alloc::Event>& SessionReader::chunkAt(int run, std::uint64_t seq, std::uint64_t& chunkFirst) {
    if (cachedRun_ == run && seq >= cachedFirst_ && seq < cachedFirst_ + cached_.size()) {
        chunkFirst = cachedFirst_;
        return cached_;
    }
    SqliteStatement s = db_.prepare(
        "SELECT first_seq, count, events FROM event_chunk WHERE run = ? AND first_seq <= ? ORDER BY first_seq DESC LIMIT 1");
    s.bind(1, static_cast<std::int64_t>(run)).bind(2, static_cast<std::int64_t>(seq));
    cached_.clear();
    cachedRun_ = -1;
    if (!s.step()) throw SessionError("event " + std::to_string(seq) + " is not in run " + std::to_string(run), path());
    decodeRow(s, cached_);
    cachedFirst_ = static_cast<std::uint64_t>(s.columnInt(0));
    if (seq >= cachedFirst_ + cached_.size()) {
        throw SessionError("event " + std::to_string(seq) + " is not in run " + std::to_string(run), path());
    }
    cachedRun_ = run;
    chunkFirst = cachedFirst_;
    return cached_;
}

EventPage SessionReader::events(int run, std::uint64_t first, std::size_t count) {
    EventPage page;
    page.firstSeq = first;
    page.totalEvents = this->run(run).eventCount;
    if (count == 0 || first >= page.totalEvents) return page;
    const std::uint64_t last = std::min<std::uint64_t>(first + count, page.totalEvents) - 1;
    forEachChunk(run, first, last, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        for (const alloc::Event& e : events) {
            if (e.seq >= first && e.seq <= last) page.events.push_back(e);
        }
        return true;
    });
    return page;
}

alloc::Stack SessionReader::stack(int run, std::uint32_t stackId) {
    alloc::Stack out;
    if (stackId == 0) return out;
    SqliteStatement s = db_.prepare(
        "SELECT k.frames FROM run_stack r JOIN stack_key k ON k.id = r.stack WHERE r.run = ? AND r.stack_id = ?");
    s.bind(1, static_cast<std::int64_t>(run)).bind(2, static_cast<std::int64_t>(stackId));
    if (!s.step()) return out;
    ByteReader ids(s.columnBlob(0), "stack");
    SqliteStatement frame = db_.prepare("SELECT filename, line, name FROM frame WHERE id = ?");
    while (!ids.atEnd()) {
        frame.bind(1, static_cast<std::int64_t>(ids.varint()));
        if (frame.step()) out.push_back(alloc::Frame{frame.columnText(0), frame.columnInt(1), frame.columnText(2)});
        frame.reset();
    }
    return out;
}

std::vector<std::pair<std::uint64_t, alloc::DeviceStats>> SessionReader::fixups(int run, std::uint64_t after, std::uint64_t upto) {
    std::vector<std::pair<std::uint64_t, alloc::DeviceStats>> out;
    SqliteStatement s = db_.prepare(
        "SELECT after_count, stats FROM stats_fixup WHERE run = ? AND after_count > ? AND after_count <= ? ORDER BY after_count");
    s.bind(1, static_cast<std::int64_t>(run)).bind(2, static_cast<std::int64_t>(after)).bind(3, static_cast<std::int64_t>(upto));
    while (s.step()) out.emplace_back(static_cast<std::uint64_t>(s.columnInt(0)), StateCodec::decodeStats(s.columnBlob(1)));
    return out;
}

std::vector<PhaseSpan> SessionReader::phases(int run) {
    SqliteStatement s = db_.prepare(
        "SELECT name, first_seq, last_seq, depth, first_op, last_op FROM phase WHERE run = ? ORDER BY first_seq, depth, ordinal");
    s.bind(1, static_cast<std::int64_t>(run));
    std::vector<PhaseSpan> out;
    while (s.step()) {
        PhaseSpan p;
        p.name = s.columnText(0);
        p.firstSeq = static_cast<std::uint64_t>(s.columnInt(1));
        p.lastSeq = static_cast<std::uint64_t>(s.columnInt(2));
        p.depth = static_cast<int>(s.columnInt(3));
        p.firstOp = static_cast<std::uint64_t>(s.columnInt(4));
        p.lastOp = static_cast<std::uint64_t>(s.columnInt(5));
        out.push_back(std::move(p));
    }
    return out;
}

alloc::DeviceStats SessionReader::initialStats(int run) {
    SqliteStatement s = db_.prepare("SELECT initial_stats FROM run WHERE id = ?");
    s.bind(1, static_cast<std::int64_t>(run));
    if (!s.step()) throw SessionError("no run " + std::to_string(run) + " in this session", path());
    return StateCodec::decodeStats(s.columnBlob(0));
}

BlockHistory SessionReader::blockHistory(int run, std::uint64_t address, std::uint64_t seq) {
    BlockHistory history;
    StateCursor cursor(*this, run);
    cursor.load(seq);
    const auto& blocks = cursor.model().blocks();
    auto it = blocks.upper_bound(address);
    if (it == blocks.begin()) return history;
    --it;
    if (address >= it->first + it->second.size) return history;
    const ModelBlock& block = it->second;
    history.address = it->first;
    history.size = block.size;
    history.requested = block.requested;
    history.stream = block.stream;
    if (block.allocSeq == 0) return history;  // never carved: a fresh segment's free remainder
    std::uint64_t first = 0;
    const auto& chunk = chunkAt(run, block.allocSeq - 1, first);
    const alloc::Event allocEvent = chunk[block.allocSeq - 1 - first];
    if (allocEvent.action != alloc::EventAction::Alloc) return history;
    history.alloc = allocEvent;
    history.size = allocEvent.roundedSize;
    history.requested = allocEvent.size;
    history.stack = stack(run, allocEvent.stackId);
    const std::uint64_t total = this->run(run).eventCount;
    if (total == 0) return history;
    forEachChunk(run, allocEvent.seq + 1, total - 1, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        for (const alloc::Event& e : events) {
            if (e.seq <= allocEvent.seq || e.address != allocEvent.address) continue;
            if (e.action == alloc::EventAction::FreeRequested && !history.freeRequested) history.freeRequested = e;
            if (e.action == alloc::EventAction::FreeCompleted) {
                history.freeCompleted = e;
                return false;
            }
            if (e.action == alloc::EventAction::Alloc) return false;
        }
        return true;
    });
    return history;
}

}  // namespace allocscope::storage
