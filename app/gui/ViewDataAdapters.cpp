#include "app/gui/ViewDataAdapters.h"

#include <algorithm>

#include "allocator/core/MemorySummary.h"
#include "allocator/replay/PoolRouting.h"
#include "storage/import/FrameLine.h"
#include "views/util/Formatting.h"

namespace allocscope::app {
namespace {

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

views::BlockState viewState(alloc::BlockState state) {
    switch (state) {
        case alloc::BlockState::ActiveAllocated: return views::BlockState::Allocated;
        case alloc::BlockState::ActivePendingFree: return views::BlockState::PendingFree;
        case alloc::BlockState::Inactive: return views::BlockState::Inactive;
    }
    return views::BlockState::Inactive;
}

views::ViewSegment toViewSegment(const alloc::SegmentInfo& segment) {
    views::ViewSegment out;
    out.address = segment.address;
    out.totalSize = segment.totalSize;
    out.pool = segment.pool == alloc::PoolKind::Small ? views::PoolKind::Small : views::PoolKind::Large;
    out.stream = static_cast<qint64>(segment.stream);
    out.expandable = segment.isExpandable;
    if (!segment.poolId.isDefault()) out.poolLabel = poolLabel(segment.poolId);
    out.blocks.reserve(segment.blocks.size());
    for (const alloc::BlockInfo& block : segment.blocks) {
        views::ViewBlock b;
        b.address = block.address;
        b.size = block.size;
        b.state = viewState(block.state);
        // An inactive block's requested size is stale (PyTorch keeps the last request): only
        // live blocks have a requested part.
        b.requestedSize = block.state == alloc::BlockState::Inactive ? 0 : std::min(block.requestedSize, block.size);
        b.stream = static_cast<qint64>(segment.stream);
        b.stackId = block.stackId;
        out.blocks.push_back(b);
    }
    return out;
}

// Does `next` continue the same expandable reservation as `row` (PyTorch reports each mapped
// range of a reservation as its own segment)?
bool sameReservation(const views::ViewSegment& row, const alloc::SegmentInfo& next) {
    return row.expandable && next.isExpandable && static_cast<qint64>(next.stream) == row.stream &&
           (next.pool == alloc::PoolKind::Small) == (row.pool == views::PoolKind::Small) &&
           (next.poolId.isDefault() ? QString() : poolLabel(next.poolId)) == row.poolLabel &&
           next.address >= row.address + row.totalSize;
}

}  // namespace

views::SegmentMapData toSegmentMapData(const std::vector<alloc::SegmentInfo>& segments) {
    views::SegmentMapData data;
    data.segments.reserve(segments.size());
    for (const alloc::SegmentInfo& segment : segments) {
        if (!data.segments.empty() && sameReservation(data.segments.back(), segment)) {
            views::ViewSegment& row = data.segments.back();
            const quint64 end = row.address + row.totalSize;
            if (segment.address > end) {
                views::ViewBlock gap;
                gap.address = end;
                gap.size = segment.address - end;
                gap.state = views::BlockState::Unmapped;
                gap.stream = row.stream;
                row.blocks.push_back(gap);
            }
            views::ViewSegment more = toViewSegment(segment);
            row.blocks.insert(row.blocks.end(), more.blocks.begin(), more.blocks.end());
            row.totalSize = segment.address + segment.totalSize - row.address;
            continue;
        }
        data.segments.push_back(toViewSegment(segment));
    }
    return data;
}

views::HeatmapData toHeatmapData(const storage::HeatmapGrid& grid, std::uint64_t eventCount) {
    if (!grid.consistent()) return views::HeatmapData{};  // not a usable grid: the view shows "no data"
    views::HeatmapData data;
    data.timeBins = grid.columns;
    data.addressBins = grid.rows;
    data.eventCount = static_cast<qint64>(eventCount);
    const std::size_t cellCount = grid.cellCount();
    data.cells.resize(cellCount);
    // Storage's share order is the view's state order; a damaged cell over 255 is cut, never wraps.
    static_assert(storage::kHeatShareCount == views::kHeatStateCount);
    static_assert(static_cast<int>(storage::HeatShare::RoundingWaste) == static_cast<int>(views::HeatState::RoundingWaste));
    static_assert(static_cast<int>(storage::HeatShare::Unmapped) == static_cast<int>(views::HeatState::Unmapped));
    static_assert(static_cast<int>(storage::HeatShare::PendingFree) == static_cast<int>(views::HeatState::PendingFree));
    for (std::size_t i = 0; i < cellCount; ++i) {
        views::HeatCell cell{};
        unsigned left = 255;
        for (std::size_t s = 0; s < cell.size(); ++s) {
            const unsigned share = std::min<unsigned>(grid.shares[s][i], left);
            cell[s] = static_cast<quint8>(share);
            left -= share;
        }
        data.cells[i] = cell;
    }
    data.columnFirstEvent.reserve(static_cast<std::size_t>(grid.columns));
    for (int c = 0; c < grid.columns; ++c) {
        data.columnFirstEvent.push_back(static_cast<qint64>(grid.columnEvents[static_cast<std::size_t>(c)]));
    }
    quint64 previousEnd = 0;
    for (std::size_t i = 0; i < grid.axis.size(); ++i) {
        const storage::AxisRange& r = grid.axis[i];
        views::AddressRange range;
        range.start = r.address;
        range.size = r.size;
        range.gapBefore = i == 0 || r.address < previousEnd ? 0 : r.address - previousEnd;
        previousEnd = r.address + r.size;
        data.ranges.push_back(range);
    }
    return data;
}

views::TimelineData toTimelineData(const storage::Timeline& timeline) {
    views::TimelineData data;
    data.fragmentationLabel = QStringLiteral("reserved, not allocated");
    data.buckets.reserve(timeline.buckets.size());
    for (const storage::TimelineBucket& b : timeline.buckets) {
        views::TimelineBucket out;
        out.firstEvent = static_cast<qint64>(b.firstSeq);
        out.lastEvent = static_cast<qint64>(b.lastSeq);
        const auto set = [&out](views::TimelineMetric metric, const storage::SeriesRange& range) {
            out.bytes[static_cast<std::size_t>(metric)] = views::MinMax{range.min, range.max};
        };
        set(views::TimelineMetric::Allocated, b.allocated);
        set(views::TimelineMetric::Reserved, b.reserved);
        set(views::TimelineMetric::Active, b.active);
        set(views::TimelineMetric::Requested, b.requested);
        if (b.reserved.max > 0) {
            out.fragmentation = std::clamp(1.0 - static_cast<double>(b.allocated.max) / static_cast<double>(b.reserved.max), 0.0, 1.0);
        }
        data.buckets.push_back(out);
    }
    return data;
}

void appendTimelineMarkers(const std::vector<alloc::Event>& events, std::vector<views::TimelineMarker>& markers) {
    for (const alloc::Event& e : events) {
        views::TimelineMarker marker;
        marker.event = static_cast<qint64>(e.seq);
        if (e.action == alloc::EventAction::Oom) {
            marker.kind = views::MarkerKind::Oom;
            marker.cause = QStringLiteral("out of memory at op %1: %2 requested, %3 free on the device")
                               .arg(e.opIndex)
                               .arg(views::Formatting::bytes(static_cast<qint64>(e.size)), views::Formatting::bytes(static_cast<qint64>(e.address)));
            markers.push_back(marker);
            continue;
        }
        const bool release = e.action == alloc::EventAction::SegmentFree || e.action == alloc::EventAction::SegmentUnmap;
        if (!release) continue;
        switch (e.cause) {
            case alloc::EventCause::OomRetry: marker.kind = views::MarkerKind::Retry; break;
            case alloc::EventCause::Gc: marker.kind = views::MarkerKind::GarbageCollection; break;
            case alloc::EventCause::EmptyCache: marker.kind = views::MarkerKind::EmptyCache; break;
            case alloc::EventCause::Program:
            case alloc::EventCause::OversizeRelease:
            case alloc::EventCause::Restored: continue;
        }
        // One marker per cause and op: the later releases of the same sweep only add bytes.
        if (!markers.empty() && markers.back().kind == marker.kind && markers.back().cause.startsWith(QStringLiteral("op %1:").arg(e.opIndex))) {
            continue;
        }
        marker.cause = QStringLiteral("op %1: %2 (%3 segment of %4)")
                           .arg(e.opIndex)
                           .arg(causeText(e.cause, e.action), text(alloc::poolName(e.pool)),
                                views::Formatting::bytes(static_cast<qint64>(e.size)));
        markers.push_back(marker);
    }
}

views::SummaryTableData toSummaryTableData(const alloc::DeviceStats& stats, int device) {
    views::SummaryTableData data;
    const auto add = [&data](const char* metric, bool isBytes, const alloc::Stat& s) {
        data.rows.push_back(views::SummaryRow{QString::fromUtf8(metric), isBytes, s.current, s.peak, s.allocated, s.freed});
    };
    using alloc::kAggregate;
    add("Allocated memory", true, stats.allocated_bytes[kAggregate]);
    add("Active memory", true, stats.active_bytes[kAggregate]);
    add("Requested memory", true, stats.requested_bytes[kAggregate]);
    add("GPU reserved memory", true, stats.reserved_bytes[kAggregate]);
    add("Non-releasable memory", true, stats.inactive_split_bytes[kAggregate]);
    add("Allocations", false, stats.allocation[kAggregate]);
    add("Active allocs", false, stats.active[kAggregate]);
    add("GPU reserved segments", false, stats.segment[kAggregate]);
    add("Non-releasable allocs", false, stats.inactive_split[kAggregate]);
    add("Oversize allocations", false, stats.oversize_allocations);
    add("Oversize GPU segments", false, stats.oversize_segments);
    const auto counter = [&data](const char* metric, std::int64_t value) {
        data.rows.push_back(views::SummaryRow{QString::fromUtf8(metric), false, value, value, 0, 0, true});
    };
    counter("cudaMalloc retries", stats.num_alloc_retries);
    counter("CUDA OOMs", stats.num_ooms);
    counter("cudaMalloc calls", stats.num_device_alloc);
    counter("cudaFree calls", stats.num_device_free);
    data.text = QString::fromStdString(alloc::formatMemorySummary(stats, device, false));
    return data;
}

QString poolLabel(const alloc::PoolId& id) {
    const QString pair = QStringLiteral("(%1,%2)").arg(id.first).arg(id.second);
    if (id.isDefault()) return QStringLiteral("default pool");
    // The replay's placeholder for a pool PyTorch's final snapshot no longer names (a MemPool
    // destroyed before the snapshot): its id is ours, not PyTorch's, so it is not shown as one.
    if (id == alloc::kInferredPool) return QStringLiteral("private pool (id not recorded)");
    // The inference's other pools (alloc::isInferredPool), as short as the map's label column
    // allows: MemPools numbered so that two stay apart; a capture's start is in the description.
    if (const std::optional<std::uint64_t> n = alloc::inferredMemPoolNumber(id)) {
        return QStringLiteral("private pool (not recorded #%1)").arg(*n + 1);
    }
    if (alloc::isInferredPool(id)) return QStringLiteral("graph pool (id not recorded)");
    if (id.second == 0) return QStringLiteral("graph pool ") + pair;
    return QStringLiteral("private pool ") + pair;
}

QString poolDescription(const alloc::PoolId& id) {
    if (id.isDefault()) return QStringLiteral("the default pool (segment_pool_id (0,0))");
    if (id == alloc::kInferredPool) {
        return QStringLiteral("a private pool whose segment_pool_id the snapshot does not give (the pool was gone "
                              "before the snapshot was taken, e.g. a torch.cuda.MemPool that was deleted); the "
                              "replay inferred that these segments belonged to a private pool");
    }
    if (alloc::inferredMemPoolNumber(id)) {
        return QStringLiteral("a private pool whose segment_pool_id the snapshot does not give: another MemPool "
                              "whose destructor released these segments at another time than the first one's");
    }
    if (const std::optional<std::size_t> entry = alloc::inferredCaptureEntry(id)) {
        return QStringLiteral("a CUDA graph's private pool whose segment_pool_id the snapshot does not give: the "
                              "replay found a capture with a pool of its own starting at trace entry %1")
            .arg(*entry);
    }
    const QString pair = QStringLiteral("(%1,%2)").arg(id.first).arg(id.second);
    if (id.second == 0) {
        return QStringLiteral("a CUDA graph's private pool (segment_pool_id %1: a capture that was given no pool)").arg(pair);
    }
    if (id.first == 0) {
        return QStringLiteral("a private pool (segment_pool_id %1): a torch.cuda.MemPool, or a pool from "
                              "torch.cuda.graph_pool_handle() shared by CUDA graphs (torch.compile's graph trees); "
                              "the id alone does not tell which")
            .arg(pair);
    }
    return QStringLiteral("a private pool (segment_pool_id %1)").arg(pair);
}

views::RunListRow toRunListRow(const storage::RunRow& run) {
    views::RunListRow row;
    row.number = run.number;
    row.name = QString::fromStdString(run.info.name);
    row.source = QString::fromStdString(run.info.sourceKind);
    if (!run.info.source.empty()) row.source += QStringLiteral(": ") + QString::fromStdString(run.info.source);
    row.config = QString::fromStdString(run.info.config);
    row.gpu = QString::fromStdString(run.info.gpu);
    row.status = QString::fromUtf8(storage::runStatusName(run.status));
    row.eventCount = static_cast<qint64>(run.eventCount);
    row.divergence = QString::fromStdString(run.divergence);
    if (run.historyStart) {
        const storage::HistoryStart& h = *run.historyStart;
        const QString live = QStringLiteral("%1 blocks (%2) live")
                                 .arg(views::Formatting::count(static_cast<qint64>(h.liveBlocks)),
                                      views::Formatting::bytes(static_cast<qint64>(h.liveBytes)));
        row.historyStart = h.noHistory
                               ? QStringLiteral("no history recorded (a state-only snapshot): the final state, %1").arg(live)
                               : QStringLiteral("%1 before the first recorded event (event %2)")
                                     .arg(live, views::Formatting::count(static_cast<qint64>(h.firstSeq)));
    }
    switch (run.verdict.kind) {
        case storage::VerdictKind::Unknown: row.verdict = views::RunVerdictKind::Unknown; break;
        case storage::VerdictKind::Exact: row.verdict = views::RunVerdictKind::Exact; break;
        case storage::VerdictKind::Diverged: row.verdict = views::RunVerdictKind::Diverged; break;
        case storage::VerdictKind::WhatIf: row.verdict = views::RunVerdictKind::WhatIf; break;
        case storage::VerdictKind::Simulated: row.verdict = views::RunVerdictKind::Simulated; break;
    }
    row.verdictText = QString::fromStdString(run.verdict.text);
    if (run.verdict.entry) row.divergedEntry = static_cast<qint64>(*run.verdict.entry);
    if (run.summary) {
        row.peakReserved = run.summary->peakReserved;
        row.ooms = run.summary->numOoms;
    }
    return row;
}

views::RunListData toRunListData(const std::vector<storage::RunRow>& runs) {
    views::RunListData data;
    data.reserve(runs.size());
    for (const storage::RunRow& run : runs) data.push_back(toRunListRow(run));
    return data;
}

QString causeText(alloc::EventCause cause, alloc::EventAction action) {
    switch (cause) {
        case alloc::EventCause::Program:
            return action == alloc::EventAction::Alloc ? QStringLiteral("requested by the program")
                                                       : QStringLiteral("freed by the program");
        case alloc::EventCause::Gc: return QStringLiteral("released by garbage collection");
        case alloc::EventCause::OversizeRelease: return QStringLiteral("released to make room (oversize blocks, max_split_size_mb)");
        case alloc::EventCause::OomRetry: return QStringLiteral("released by the retry after a failed cudaMalloc");
        case alloc::EventCause::EmptyCache: return QStringLiteral("released by empty_cache()");
        case alloc::EventCause::Restored: return QStringLiteral("live before the recorded history starts (restored from the snapshot)");
    }
    return QString();
}

views::BlockInspectorData toBlockInspectorData(const storage::BlockHistory& history, alloc::BlockState state,
                                               const alloc::PoolId& pool) {
    views::BlockInspectorData data;
    data.valid = true;
    data.memoryPool = poolLabel(pool);
    data.address = history.address;
    data.size = history.size;
    data.requested = history.requested;
    data.stream = static_cast<qint64>(history.stream);
    data.state = text(alloc::blockStateName(state));
    const auto add = [&data](const std::optional<alloc::Event>& e) {
        if (!e) return;
        views::InspectorEvent out;
        out.action = text(alloc::actionName(e->action));
        out.seq = static_cast<qint64>(e->seq);
        out.op = static_cast<qint64>(e->opIndex);
        out.cause = causeText(e->cause, e->action);
        data.events.push_back(out);
    };
    add(history.alloc);
    add(history.freeRequested);
    add(history.freeCompleted);
    if (history.alloc) {
        data.segment = history.alloc->segment;
        data.pool = text(alloc::poolName(history.alloc->pool));
    }
    for (const alloc::Frame& frame : history.stack) {
        data.stack.push_back(views::StackFrameText{QString::fromStdString(frame.name), QString::fromStdString(frame.filename),
                                                   storage::FrameLine::toSnapshot(frame.line)});
    }
    return data;
}

}  // namespace allocscope::app
