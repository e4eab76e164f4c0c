#include "storage/session/LiveBlocks.h"

#include <charconv>

#include "storage/session/SessionError.h"
#include "storage/session/StateCursor.h"
#include "storage/session/TimelineSeries.h"

namespace allocscope::storage {
namespace {

std::optional<std::uint64_t> parseNumber(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// Where the recorded history starts (events before it restore the state before the first
// recorded entry) and how many of the run's events follow its trace entries one to one: all of
// an exact import's, those before the first difference of a diverged one, none otherwise (a
// workload, a what-if, an RMM log, whose segment events the log does not have).
struct EntryMapping {
    std::uint64_t first = 0;
    std::uint64_t count = 0;
};

EntryMapping entryMapping(SessionReader& reader, int run) {
    const RunRow row = reader.run(run);
    EntryMapping mapping;
    if (row.info.sourceKind != "snapshot") return mapping;
    mapping.first = row.historyStart ? row.historyStart->firstSeq : 0;
    const std::uint64_t recorded = row.eventCount > mapping.first ? row.eventCount - mapping.first : 0;
    if (row.verdict.kind == VerdictKind::Exact) mapping.count = recorded;
    if (row.verdict.kind == VerdictKind::Diverged && row.verdict.entry) mapping.count = std::min(recorded, *row.verdict.entry);
    return mapping;
}

}  // namespace

std::optional<RunPoint> RunPoint::parse(const std::string& text, std::string* why) {
    RunPoint point;
    if (text == "end") return point;
    if (text == "peak") {
        point.kind = Kind::Peak;
        return point;
    }
    for (const auto& [prefix, kind] : {std::pair{std::string_view("event:"), Kind::Event}, std::pair{std::string_view("entry:"), Kind::Entry}}) {
        if (text.compare(0, prefix.size(), prefix) != 0) continue;
        const std::optional<std::uint64_t> value = parseNumber(std::string_view(text).substr(prefix.size()));
        if (!value) {
            if (why) *why = "'" + text + "': " + std::string(prefix) + " needs a number (from 0)";
            return std::nullopt;
        }
        point.kind = kind;
        point.value = *value;
        return point;
    }
    if (why) *why = "'" + text + "' is not a point of a run: use end, peak, event:E or entry:K";
    return std::nullopt;
}

std::string RunPoint::text() const {
    switch (kind) {
        case Kind::End: return "end";
        case Kind::Peak: return "peak";
        case Kind::Event: return "event:" + std::to_string(value);
        case Kind::Entry: return "entry:" + std::to_string(value);
    }
    return {};
}

std::uint64_t LiveBlocks::peakEvent(SessionReader& reader, int run) {
    const std::uint64_t total = reader.run(run).eventCount;
    if (total == 0) throw SessionError("run " + std::to_string(run) + " has no events", reader.path());
    SeriesValues values;
    std::int64_t best = -1;
    std::uint64_t bestSeq = 0;
    // Allocated bytes move by what each event carries (TimelineSeries), so one pass over the
    // events finds the peak without rebuilding any state.
    reader.forEachChunk(run, 0, total - 1, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        for (const alloc::Event& e : events) {
            values.apply(e);
            if (values.allocated > best) {
                best = values.allocated;
                bestSeq = e.seq;
            }
        }
        return true;
    });
    return bestSeq;
}

std::optional<std::uint64_t> LiveBlocks::entryOf(SessionReader& reader, int run, std::uint64_t event) {
    const EntryMapping mapping = entryMapping(reader, run);
    if (event < mapping.first || event - mapping.first >= mapping.count) return std::nullopt;
    return event - mapping.first;
}

std::uint64_t LiveBlocks::eventOf(SessionReader& reader, int run, const RunPoint& point) {
    const RunRow row = reader.run(run);
    const std::string runName = "run " + std::to_string(run);
    if (row.eventCount == 0) throw SessionError(runName + " has no events", reader.path());
    switch (point.kind) {
        case RunPoint::Kind::End: return row.eventCount - 1;
        case RunPoint::Kind::Peak: return peakEvent(reader, run);
        case RunPoint::Kind::Event:
            if (point.value >= row.eventCount) {
                throw SessionError("event " + std::to_string(point.value) + " is past the end of " + runName + " (" +
                                       std::to_string(row.eventCount) + " events, numbered from 0)",
                                   reader.path());
            }
            return point.value;
        case RunPoint::Kind::Entry: {
            const EntryMapping mapping = entryMapping(reader, run);
            if (point.value < mapping.count) return mapping.first + point.value;
            if (row.info.sourceKind != "snapshot") {
                throw SessionError(runName + " was not imported from a snapshot: it has no trace entries (use event:E)", reader.path());
            }
            if (row.verdict.kind != VerdictKind::Exact && row.verdict.kind != VerdictKind::Diverged) {
                throw SessionError(runName + " is not a replay checked against its recording (verdict " +
                                       std::string(verdictKindName(row.verdict.kind)) +
                                       "): its events cannot be matched to trace entries (use event:E)",
                                   reader.path());
            }
            if (row.verdict.kind == VerdictKind::Diverged) {
                throw SessionError("trace entry " + std::to_string(point.value) + " is at or after where " + runName +
                                       " diverged from the recording (" + row.verdict.text + "): use event:E",
                                   reader.path());
            }
            throw SessionError("trace entry " + std::to_string(point.value) + " is past the end of the trace (" +
                                   std::to_string(mapping.count) + " entries, numbered from 0)",
                               reader.path());
        }
    }
    return row.eventCount - 1;
}

std::vector<LiveBlock> LiveBlocks::at(SessionReader& reader, int run, std::uint64_t seq) {
    const std::optional<HistoryStart> start = reader.run(run).historyStart;
    const EntryMapping mapping = entryMapping(reader, run);  // once, not per block
    StateCursor cursor(reader, run);
    cursor.loadModel(seq);
    const SegmentStateModel& model = cursor.model();
    std::vector<LiveBlock> out;
    for (const auto& [address, block] : model.blocks()) {
        if (block.state == alloc::BlockState::Inactive) continue;
        LiveBlock live;
        live.address = address;
        live.size = block.size;
        live.requestedSize = block.requested;
        live.stream = block.stream;
        live.segment = block.segment;
        live.poolKind = block.pool;
        live.state = block.state;
        live.stackId = block.stackId;
        if (block.allocSeq > 0) live.allocEvent = block.allocSeq - 1;
        live.restored = start && live.allocEvent && *live.allocEvent < start->firstSeq;
        if (live.allocEvent && *live.allocEvent >= mapping.first && *live.allocEvent - mapping.first < mapping.count) {
            live.allocEntry = *live.allocEvent - mapping.first;
        }
        const auto segment = model.segmentTable().find(block.segment);
        if (segment != model.segmentTable().end()) live.pool = segment->second.poolId;
        out.push_back(live);
    }
    return out;
}

}  // namespace allocscope::storage
