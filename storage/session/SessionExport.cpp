#include "storage/session/SessionExport.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "storage/import/FrameLine.h"
#include "storage/session/EventCodec.h"
#include "storage/session/SessionError.h"
#include "storage/session/StateCursor.h"
#include "storage/session/TimelineSeries.h"

namespace allocscope::storage {
namespace {

// Clamps the window to the run; throws if it is empty.
std::uint64_t clampWindow(SessionReader& reader, int run, std::uint64_t first, std::uint64_t& last) {
    const std::uint64_t total = reader.run(run).eventCount;
    if (total == 0) throw SessionError("run " + std::to_string(run) + " has no events", reader.path());
    if (first >= total) {
        throw SessionError("event " + std::to_string(first) + " is past the end of run " + std::to_string(run) + " (" +
                               std::to_string(total) + " events)",
                           reader.path());
    }
    last = std::min(last, total - 1);
    if (last < first) throw SessionError("the export window is empty (--from is after --to)", reader.path());
    return total;
}

std::vector<formats::SnapshotFrame> framesOf(SessionReader& reader, int run, std::uint32_t stackId,
                                             std::map<std::uint32_t, std::vector<formats::SnapshotFrame>>& cache) {
    auto it = cache.find(stackId);
    if (it != cache.end()) return it->second;
    std::vector<formats::SnapshotFrame> frames;
    for (const alloc::Frame& f : reader.stack(run, stackId)) {
        frames.push_back({f.filename, FrameLine::toSnapshot(f.line), f.name});  // unknown: 2**64-1 again
    }
    cache[stackId] = frames;
    return frames;
}

}  // namespace

void SessionExport::eventsCsv(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last, std::ostream& out) {
    clampWindow(reader, run, first, last);
    out << "seq,op_index,action,cause,pool,stream,address,size,rounded_size,segment,stack_id,"
           "allocated_bytes,reserved_bytes,active_bytes,requested_bytes\n";
    SqliteStatement s = reader.db().prepare(
        "SELECT first_seq, count, start_allocated, start_reserved, start_active, start_requested, events FROM event_chunk "
        "WHERE run = ? AND first_seq >= (SELECT coalesce(max(first_seq), 0) FROM event_chunk WHERE run = ?1 AND first_seq <= ?) "
        "AND first_seq <= ? ORDER BY first_seq");
    s.bind(1, static_cast<std::int64_t>(run)).bind(2, static_cast<std::int64_t>(first)).bind(3, static_cast<std::int64_t>(last));
    std::vector<alloc::Event> events;
    while (s.step()) {
        SeriesValues values{s.columnInt(2), s.columnInt(3), s.columnInt(4), s.columnInt(5)};
        events.clear();
        EventCodec::decode(s.columnBlob(6), static_cast<std::uint64_t>(s.columnInt(0)), static_cast<std::size_t>(s.columnInt(1)), events);
        for (const alloc::Event& e : events) {
            values.apply(e);
            if (e.seq < first || e.seq > last) continue;
            out << e.seq << ',' << e.opIndex << ',' << alloc::actionName(e.action) << ',' << alloc::causeName(e.cause) << ','
                << alloc::poolName(e.pool) << ',' << e.stream << ',' << e.address << ',' << e.size << ',' << e.roundedSize << ','
                << e.segment << ',' << e.stackId << ',' << values.allocated << ',' << values.reserved << ',' << values.active
                << ',' << values.requested << '\n';
        }
    }
}

formats::Snapshot SessionExport::snapshot(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last) {
    clampWindow(reader, run, first, last);
    const RunRow row = reader.run(run);
    std::map<std::uint32_t, std::vector<formats::SnapshotFrame>> frames;
    formats::Snapshot snap;
    snap.allocator_settings.present = true;
    snap.allocator_settings.conf = row.info.config;
    StateCursor cursor(reader, run);
    const StateAtEvent state = cursor.load(last);
    snap.allocator_settings.max_split_size = state.stats.max_split_size;
    for (const alloc::SegmentInfo& seg : state.segments) {
        formats::SnapshotSegment out;
        out.address = seg.address;
        out.total_size = seg.totalSize;
        out.allocated_size = seg.allocatedSize;
        out.active_size = seg.activeSize;
        out.requested_size = seg.requestedSize;
        out.stream = seg.stream;
        out.segment_type = std::string(alloc::poolName(seg.pool));
        out.segment_pool_id = {seg.poolId.first, seg.poolId.second};
        out.is_expandable = seg.isExpandable;
        out.frames = framesOf(reader, run, seg.stackId, frames);
        for (const alloc::BlockInfo& b : seg.blocks) {
            formats::SnapshotBlock block;
            block.address = b.address;
            block.size = b.size;
            block.requested_size = b.requestedSize;
            block.state = std::string(alloc::blockStateName(b.state));
            block.frames = framesOf(reader, run, b.stackId, frames);
            out.blocks.push_back(std::move(block));
        }
        snap.segments.push_back(std::move(out));
    }
    snap.device_traces.emplace_back();
    auto& trace = snap.device_traces.back();
    // A session keeps event order, not wall-clock time: entry k gets the even time 2 (k + 1) and
    // a phase mark placed before entry k the odd time 2 k + 1, so a reader placing
    // external_annotations by time (as TraceImport does) puts every mark back between the same
    // events. Phases overlapping the window are clipped to it.
    std::vector<std::pair<std::tuple<std::int64_t, int, int>, formats::Annotation>> marks;
    for (const PhaseSpan& p : reader.phases(run)) {
        if (p.lastSeq < first || p.firstSeq > last) continue;
        const auto start = static_cast<std::int64_t>(2 * std::max(p.firstSeq, first) + 1);
        const auto end = static_cast<std::int64_t>(2 * (std::min(p.lastSeq, last) + 1) + 1);
        // At one time: ends before starts, inner ends before outer ones, outer starts first.
        marks.push_back({{start, 1, p.depth}, formats::Annotation{p.name, "START", 0, start}});
        marks.push_back({{end, 0, -p.depth}, formats::Annotation{p.name, "END", 0, end}});
    }
    std::stable_sort(marks.begin(), marks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& mark : marks) snap.external_annotations.push_back(std::move(mark.second));
    reader.forEachChunk(run, first, last, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        for (const alloc::Event& e : events) {
            if (e.seq < first || e.seq > last) continue;
            // Restored state is not part of the recorded history: the export starts mid-run as
            // the recording did, and its segments still say what was live.
            if (e.cause == alloc::EventCause::Restored) continue;
            formats::TraceEntry entry;
            entry.time_us = static_cast<std::int64_t>(2 * (e.seq + 1));
            entry.action = std::string(alloc::actionName(e.action));
            if (e.action == alloc::EventAction::Oom) {
                entry.device_free = e.address;
                entry.has_device_free = true;
            } else {
                entry.addr = e.address;
                entry.has_addr = true;
            }
            entry.size = e.size;
            entry.stream = e.stream;
            entry.compile_context = "N/A";
            entry.frames = framesOf(reader, run, e.stackId, frames);
            trace.push_back(std::move(entry));
        }
        return true;
    });
    return snap;
}

formats::RmmLog SessionExport::rmmLog(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last) {
    clampWindow(reader, run, first, last);
    formats::RmmLog log;
    reader.forEachChunk(run, first, last, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
        for (const alloc::Event& e : events) {
            if (e.seq < first || e.seq > last || e.cause == alloc::EventCause::Restored) continue;
            formats::RmmRecord record;
            if (e.action == alloc::EventAction::Alloc) record.action = formats::RmmAction::Allocate;
            else if (e.action == alloc::EventAction::FreeRequested) record.action = formats::RmmAction::Free;
            else if (e.action == alloc::EventAction::Oom) record.action = formats::RmmAction::AllocateFailure;
            else continue;
            record.pointer = e.action == alloc::EventAction::Oom ? 0 : e.address;
            record.size = e.size;
            record.stream = e.stream;
            // RMM logs wall-clock times; a recording has op indexes: one microsecond per op.
            char time[40];
            const std::uint64_t us = e.opIndex;
            std::snprintf(time, sizeof time, "%02llu:%02llu:%02llu.%06llu", static_cast<unsigned long long>(us / 3600000000ull),
                          static_cast<unsigned long long>(us / 60000000ull % 60), static_cast<unsigned long long>(us / 1000000ull % 60),
                          static_cast<unsigned long long>(us % 1000000ull));
            record.time = time;
            log.records.push_back(std::move(record));
        }
        return true;
    });
    return log;
}

}  // namespace allocscope::storage
