#pragma once
// Storage and allocator values -> the plain view-data structs the views draw (views/ never sees
// allocator or storage types). Pure functions: tests call them on known states, background jobs
// call them off the GUI thread.
#include <cstdint>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/SegmentInfo.h"
#include "storage/session/SessionTypes.h"
#include "views/data/BlockInspectorData.h"
#include "views/data/HeatmapData.h"
#include "views/data/RunListData.h"
#include "views/data/SegmentMapData.h"
#include "views/data/SummaryTableData.h"
#include "views/data/TimelineData.h"

namespace allocscope::app {

// The layout at one event. Blocks keep their state; an allocated (or pending-free) block's
// requestedSize separates the asked-for bytes from rounding waste. The mapped ranges of one
// expandable reservation (consecutive expandable segments of the same stream and pool) become
// one row, with the address space between them shown as Unmapped pages.
views::SegmentMapData toSegmentMapData(const std::vector<alloc::SegmentInfo>& segments);

// The stored time x address grid: its five share planes become the view's five states
// (requested, rounding waste, inactive, pending free, unmapped); the rest of a cell is address
// space not reserved then. `eventCount` is the run's number of events.
views::HeatmapData toHeatmapData(const storage::HeatmapGrid& grid, std::uint64_t eventCount);

// Timeline buckets as the chart wants them; the fragmentation metric per bucket is the share of
// reserved bytes not allocated (1 - allocated / reserved, at the bucket's maxima).
views::TimelineData toTimelineData(const storage::Timeline& timeline);

// Adds a marker for each OOM, OOM retry (cached blocks released before retrying cudaMalloc),
// garbage-collection release and empty_cache release in `events`. Releases of one cause by one
// program op are one marker (an empty_cache that frees ten segments is one event to the user).
void appendTimelineMarkers(const std::vector<alloc::Event>& events, std::vector<views::TimelineMarker>& markers);

// memory_summary() at one event: the compact current / peak rows and PyTorch's text verbatim.
views::SummaryTableData toSummaryTableData(const alloc::DeviceStats& stats, int device = 0);

// A segment's memory pool in words, from PyTorch's MempoolId_t conventions (reference §12):
// (0, 0) "default pool"; (a, 0) "graph pool (a,0)" -- the pool a CUDA graph capture creates for
// itself when given none; anything else "private pool (a,b)". (0, n) is what both
// torch.cuda.MemPool() and torch.cuda.graph_pool_handle() (shared by torch.compile's CUDA graph
// trees) hand out, so the id alone cannot say which: it is not guessed.
QString poolLabel(const alloc::PoolId& id);
// The longer explanation of a pool for tooltips.
QString poolDescription(const alloc::PoolId& id);

views::RunListRow toRunListRow(const storage::RunRow& run);
views::RunListData toRunListData(const std::vector<storage::RunRow>& runs);

// A block's history for the inspector. `state` is the block's state at the current event
// (from the layout); the events say what happened to it and why.
// `pool`: the memory pool of the block's segment (from the layout; blocks carry none).
views::BlockInspectorData toBlockInspectorData(const storage::BlockHistory& history, alloc::BlockState state,
                                               const alloc::PoolId& pool = {});

// "released by garbage collection", "requested by the program", ...
QString causeText(alloc::EventCause cause, alloc::EventAction action);

}  // namespace allocscope::app
