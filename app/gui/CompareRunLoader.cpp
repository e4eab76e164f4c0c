#include "app/gui/CompareRunLoader.h"

#include <QObject>

#include <algorithm>

#include "allocator/compare/FragmentationMetrics.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/replay/AddressTies.h"
#include "app/gui/ViewDataAdapters.h"
#include "storage/session/SessionError.h"
#include "storage/session/StateCursor.h"
#include "storage/session/TimelineQuery.h"

namespace allocscope::app {
namespace {

std::uint64_t u64(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

std::uint64_t opOf(storage::SessionReader& reader, int run, std::uint64_t seq) {
    std::uint64_t first = 0;
    const std::vector<alloc::Event>& chunk = reader.chunkAt(run, seq, first);
    const std::uint64_t i = seq - first;
    return i < chunk.size() ? chunk[i].opIndex : 0;
}

std::uint64_t countOf(const storage::RunSummary& s, alloc::EventAction action) {
    const auto i = static_cast<std::size_t>(action);
    return i < s.actionCounts.size() ? s.actionCounts[i] : 0;
}

// The first event at which reserved reached `peak` (a 1,200-bucket pass, then an exact pass
// over the one bucket that holds it).
std::optional<std::uint64_t> firstSeqAtReserved(storage::SessionReader& reader, int run, std::uint64_t events, std::int64_t peak) {
    if (events == 0 || peak <= 0) return std::nullopt;
    const storage::Timeline coarse = storage::TimelineQuery::build(reader, run, 0, events - 1, 1200);
    for (const storage::TimelineBucket& b : coarse.buckets) {
        if (b.reserved.max < peak) continue;
        const std::uint64_t width = b.lastSeq - b.firstSeq + 1;
        const storage::Timeline fine =
            storage::TimelineQuery::build(reader, run, b.firstSeq, b.lastSeq, static_cast<int>(std::min<std::uint64_t>(width, 1u << 20)), UINT64_MAX);
        for (const storage::TimelineBucket& e : fine.buckets)
            if (e.reserved.max >= peak) return e.firstSeq;
        return b.firstSeq;
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> CompareRunLoader::lastEventAtOp(storage::SessionReader& reader, int run, std::uint64_t op) {
    const std::uint64_t events = reader.run(run).eventCount;
    if (events == 0 || opOf(reader, run, 0) > op) return std::nullopt;
    // Events are in op order: binary search for the last one whose op is <= `op`.
    std::uint64_t lo = 0, hi = events - 1;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;
        if (opOf(reader, run, mid) <= op) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

views::SegmentMapData CompareRunLoader::mapAtOp(storage::SessionReader& reader, int run, std::uint64_t op) {
    const std::optional<std::uint64_t> seq = lastEventAtOp(reader, run, op);
    if (!seq) return {};
    storage::StateCursor cursor(reader, run);
    return toSegmentMapData(cursor.load(*seq).segments);
}

std::uint64_t CompareRunLoader::opCount(storage::SessionReader& reader, int run) {
    const storage::RunRow row = reader.run(run);
    std::uint64_t ops = row.summary ? row.summary->opCount : 0;
    if (row.eventCount > 0) ops = std::max(ops, opOf(reader, run, row.eventCount - 1) + 1);
    return ops;
}

views::CompareRun CompareRunLoader::load(storage::SessionReader& reader, int run, const alloc::CostModel& cost) {
    const storage::RunRow row = reader.run(run);
    if (!row.summary) {
        throw storage::SessionError("run " + std::to_string(run) + " is " + storage::runStatusName(row.status) +
                                        " and has no summary to compare",
                                    reader.path());
    }
    const storage::RunSummary& s = *row.summary;
    const alloc::ParseResult parsed = alloc::parseConfig(row.info.config);
    const alloc::AllocatorConfig config = parsed.accepted() ? parsed.config : alloc::AllocatorConfig{};

    views::CompareRun r;
    r.label = QString::fromStdString(row.info.name);
    r.configText = QString::fromStdString(row.info.config);
    r.run = run;
    r.peakReserved = u64(s.peakReserved);
    r.peakAllocated = u64(s.peakAllocated);
    r.cudaMallocs = countOf(s, alloc::EventAction::SegmentAlloc);
    r.cudaFrees = countOf(s, alloc::EventAction::SegmentFree);
    r.retries = u64(s.finalStats.num_alloc_retries);
    r.ooms = u64(s.numOoms);
    // A replay of a history that starts mid-run (the recorder stored where it starts): its peaks
    // and counts are the recorded window's.
    r.windowOnly = row.historyStart.has_value();
    if (row.verdict.kind == storage::VerdictKind::WhatIf) {
        if (const auto ties = alloc::AddressTies::countsIn(row.verdict.text)) r.modelledDecisions = ties->first;
    }
    // Program allocs + frees as the cost model counts them: every alloc op (an OOM'd one too) and
    // every free.
    const std::uint64_t allocFreeOps = countOf(s, alloc::EventAction::Alloc) +
                                       countOf(s, alloc::EventAction::FreeRequested) + countOf(s, alloc::EventAction::Oom);
    r.allocatorUs = cost.nativeUs(allocFreeOps, config.expandableSegments, r.cudaMallocs, r.cudaFrees,
                                  countOf(s, alloc::EventAction::SegmentMap), countOf(s, alloc::EventAction::SegmentUnmap));

    const std::uint64_t events = row.eventCount;
    // The reserved timeline by program op: per bucket, the op of its first event and the most
    // reserved in it (peaks survive the bucketing); buckets of one op merge.
    if (events > 0) {
        const storage::Timeline timeline = storage::TimelineQuery::build(reader, run, 0, events - 1, kTimelineBuckets);
        for (const storage::TimelineBucket& b : timeline.buckets) {
            const auto op = static_cast<qint64>(opOf(reader, run, b.firstSeq));
            if (r.reservedTimeline.empty() && op > 0) r.reservedTimeline.push_back({0, 0});
            if (!r.reservedTimeline.empty() && r.reservedTimeline.back().op == op) {
                r.reservedTimeline.back().reserved = std::max<qint64>(r.reservedTimeline.back().reserved, b.reserved.max);
            } else {
                r.reservedTimeline.push_back({op, b.reserved.max});
            }
        }
    }
    // Waste at the peak: the layout once the op that first reached the most reserved memory
    // finished (rounding of the block it carved included).
    std::int64_t mostReserved = 0;
    for (const views::CompareTimelinePoint& p : r.reservedTimeline) mostReserved = std::max<std::int64_t>(mostReserved, p.reserved);
    if (const std::optional<std::uint64_t> peakSeq = firstSeqAtReserved(reader, run, events, mostReserved)) {
        const std::optional<std::uint64_t> endOfOp = lastEventAtOp(reader, run, opOf(reader, run, *peakSeq));
        storage::StateCursor cursor(reader, run);
        const storage::StateAtEvent state = cursor.load(endOfOp.value_or(*peakSeq));
        const alloc::FragmentationMetrics f = alloc::FragmentationMetrics::of(state.segments, alloc::kSmallBuffer, config.largeSegmentSize);
        r.roundingWaste = f.roundingLoss;
        r.strandedFree = f.strandedFree;
    }
    if (r.ooms > 0) {
        reader.forEachChunk(run, 0, events == 0 ? 0 : events - 1, [&](std::uint64_t, const std::vector<alloc::Event>& chunk) {
            for (const alloc::Event& e : chunk) {
                if (e.action == alloc::EventAction::Oom) {
                    r.firstOomOp = static_cast<qint64>(e.opIndex);
                    return false;
                }
            }
            return true;
        });
    }
    return r;
}

views::CompareRun CompareRunLoader::fromMetrics(const alloc::RunMetrics& m, const QString& label, const QString& configText) {
    views::CompareRun r;
    r.label = label;
    r.configText = configText;
    r.asyncBackend = m.asyncBackend;
    r.peakReserved = m.peakReserved;
    r.peakAllocated = m.peakAllocated;
    if (m.atPeak) {
        r.roundingWaste = m.atPeak->roundingLoss;
        r.strandedFree = m.atPeak->strandedFree;
    }
    r.cudaMallocs = m.cudaMallocs;
    r.cudaFrees = m.cudaFrees;
    r.retries = m.retries;
    r.ooms = m.ooms.size();
    r.firstOomOp = m.ooms.empty() ? -1 : static_cast<qint64>(m.ooms.front().opIndex);
    r.allocatorUs = m.allocatorUs;
    for (const alloc::TimelinePoint& p : m.timeline)
        r.reservedTimeline.push_back({static_cast<qint64>(p.opIndex), static_cast<qint64>(p.reserved)});
    if (m.asyncBackend) {
        r.noMapReason = QObject::tr("backend:cudaMallocAsync has no segment map: the driver's pool hands out memory "
                                    "without segments or blocks the allocator could show (numbers from the fitted "
                                    "cudaMallocAsync model; not recorded in the session).");
    }
    return r;
}

}  // namespace allocscope::app
