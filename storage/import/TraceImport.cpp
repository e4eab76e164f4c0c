#include "storage/import/TraceImport.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "storage/formats/FormatError.h"
#include "storage/import/FrameLine.h"
#include "storage/import/TraceFile.h"

namespace allocscope::storage {
namespace {

using alloc::EventAction;
using alloc::RecordedEntry;
using alloc::RecordedTrace;

alloc::Stack toStack(const formats::FrameList& frames) {
    alloc::Stack stack;
    stack.reserve(frames.size());
    for (const formats::SnapshotFrame& f : frames) {
        stack.push_back(alloc::Frame{f.filename, FrameLine::fromSnapshot(f.line), f.name});
    }
    return stack;
}

// Interns frame lists into one StackTable, converting each shared list once: a million entries
// share a few thousand lists (FrameList.h), and converting them one by one copied every string.
class StackInterner {
public:
    explicit StackInterner(alloc::StackTable& stacks) : stacks_(stacks) {}
    std::uint32_t intern(const formats::FrameList& frames) {
        if (frames.empty()) return 0;
        auto [it, added] = ids_.try_emplace(frames.identity(), 0);
        if (added) it->second = stacks_.intern(toStack(frames));
        return it->second;
    }

private:
    alloc::StackTable& stacks_;
    // Keyed by the shared list's address: valid because the Snapshot outlives this interner.
    std::unordered_map<const void*, std::uint32_t> ids_;
};

std::string entryWhere(std::size_t device, std::size_t index) {
    return "device_traces[" + std::to_string(device) + "][" + std::to_string(index) + "]";
}

alloc::BlockState blockState(const std::string& state, const std::string& where) {
    if (state == "active_allocated") return alloc::BlockState::ActiveAllocated;
    // PyTorch's docstring spells the pending state "active_awaiting_free"; its serializers write
    // "active_pending_free". Both mean the same.
    if (state == "active_pending_free" || state == "active_awaiting_free") return alloc::BlockState::ActivePendingFree;
    if (state == "inactive") return alloc::BlockState::Inactive;
    throw formats::FormatError("unknown block state '" + state + "'", where);
}

alloc::SegmentInfo toSegment(const formats::SnapshotSegment& seg, StackInterner& stacks, const std::string& where) {
    alloc::SegmentInfo info;
    info.address = seg.address;
    info.totalSize = seg.total_size;
    info.allocatedSize = seg.allocated_size;
    info.activeSize = seg.active_size;
    info.requestedSize = seg.requested_size;
    info.stream = seg.stream;
    if (seg.segment_type == "small") {
        info.pool = alloc::PoolKind::Small;
    } else if (seg.segment_type == "large") {
        info.pool = alloc::PoolKind::Large;
    } else {
        throw formats::FormatError("unknown segment_type '" + seg.segment_type + "'", where);
    }
    info.poolId = alloc::PoolId{seg.segment_pool_id.first, seg.segment_pool_id.second};
    info.isExpandable = seg.is_expandable;
    info.stackId = stacks.intern(seg.frames);
    for (std::size_t b = 0; b < seg.blocks.size(); ++b) {
        const formats::SnapshotBlock& block = seg.blocks[b];
        alloc::BlockInfo bi;
        bi.address = block.address;
        bi.size = block.size;
        bi.requestedSize = block.requested_size;
        bi.state = blockState(block.state, where + ".blocks[" + std::to_string(b) + "]");
        bi.stackId = stacks.intern(block.frames);
        info.blocks.push_back(bi);
    }
    return info;
}

// Appends the entries of one trace entry (a legacy "free" becomes both halves of a free).
void appendEntry(RecordedTrace& trace, StackInterner& stacks, const formats::TraceEntry& e, std::size_t device,
                 std::size_t index) {
    // Entries that carry no allocator decision: annotations (2024 pseudo-events, 2026 annotate).
    if (e.action == "annotate" || e.action == "user_defined") return;
    std::optional<EventAction> action = alloc::actionFromName(e.action);
    const bool legacyFree = e.action == "free";
    if (!action && !legacyFree) throw formats::FormatError("unknown trace action '" + e.action.str() + "'", entryWhere(device, index));
    RecordedEntry entry;
    entry.size = e.size;
    entry.stream = e.stream;
    entry.timeUs = e.time_us_unknown ? 0 : e.time_us;  // 0: no usable clock (RecordedTrace.h)
    entry.stackId = stacks.intern(e.frames);
    if (action == EventAction::Oom) {
        entry.action = EventAction::Oom;
        entry.deviceFree = e.device_free;
        trace.entries.push_back(entry);
        return;
    }
    if (!e.has_addr && action != EventAction::Snapshot) {
        throw formats::FormatError("trace entry '" + e.action.str() + "' has no addr", entryWhere(device, index));
    }
    entry.address = e.addr;
    if (legacyFree) {
        entry.action = EventAction::FreeRequested;
        trace.entries.push_back(entry);
        entry.action = EventAction::FreeCompleted;
        trace.entries.push_back(entry);
        return;
    }
    entry.action = *action;
    trace.entries.push_back(entry);
}

// Places each record_function marker before the first entry recorded at or after its time. A
// marker whose device or time is unknown (did not fit int64) cannot be placed and is left out.
void placePhases(RecordedTrace& trace, const std::vector<formats::Annotation>& annotations) {
    for (const formats::Annotation& a : annotations) {
        if (!a.device || !a.time_us || *a.device != trace.device) continue;
        if (a.stage != "START" && a.stage != "END") continue;
        auto it = std::lower_bound(trace.entries.begin(), trace.entries.end(), *a.time_us,
                                   [](const RecordedEntry& e, std::int64_t t) { return e.timeUs < t; });
        trace.phases.push_back(alloc::PhaseMark{static_cast<std::size_t>(it - trace.entries.begin()), a.name,
                                                a.stage == "START"});
    }
    std::stable_sort(trace.phases.begin(), trace.phases.end(),
                     [](const alloc::PhaseMark& x, const alloc::PhaseMark& y) { return x.entryIndex < y.entryIndex; });
}

}  // namespace

std::vector<RecordedTrace> tracesFromSnapshot(const formats::Snapshot& snapshot) {
    std::set<std::int64_t> devices;
    for (std::size_t d = 0; d < snapshot.device_traces.size(); ++d) {
        if (!snapshot.device_traces[d].empty()) devices.insert(static_cast<std::int64_t>(d));
    }
    for (const formats::SnapshotSegment& seg : snapshot.segments) {
        if (seg.device >= 0) devices.insert(seg.device);  // -1: pinned host segments, not ours
    }
    std::vector<RecordedTrace> traces;
    for (std::int64_t device : devices) {
        RecordedTrace trace;
        trace.device = device;
        trace.origin = "snapshot device " + std::to_string(device);
        if (snapshot.allocator_settings.present && snapshot.allocator_settings.conf) {
            trace.settings = *snapshot.allocator_settings.conf;
        }
        StackInterner stacks(trace.stacks);
        const std::size_t d = static_cast<std::size_t>(device);
        if (d < snapshot.device_traces.size()) {
            const std::vector<formats::TraceEntry>& entries = snapshot.device_traces[d];
            trace.entries.reserve(entries.size());
            for (std::size_t i = 0; i < entries.size(); ++i) appendEntry(trace, stacks, entries[i], d, i);
        }
        std::vector<alloc::SegmentInfo> segments;
        for (std::size_t s = 0; s < snapshot.segments.size(); ++s) {
            if (snapshot.segments[s].device != device) continue;
            segments.push_back(toSegment(snapshot.segments[s], stacks, "segments[" + std::to_string(s) + "]"));
        }
        std::sort(segments.begin(), segments.end(),
                  [](const alloc::SegmentInfo& a, const alloc::SegmentInfo& b) { return a.address < b.address; });
        trace.finalSegments = std::move(segments);
        placePhases(trace, snapshot.external_annotations);
        traces.push_back(std::move(trace));
    }
    return traces;
}

RecordedTrace traceFromRmmLog(const formats::RmmLog& log) {
    RecordedTrace trace;
    trace.origin = "RMM CSV";
    trace.hasSegmentEvents = false;
    trace.entries.reserve(log.records.size() * 2);
    for (const formats::RmmRecord& r : log.records) {
        RecordedEntry entry;
        entry.address = r.pointer;
        entry.size = r.size;
        entry.stream = r.stream;
        switch (r.action) {
            case formats::RmmAction::Allocate:
                entry.action = EventAction::Alloc;
                trace.entries.push_back(entry);
                break;
            case formats::RmmAction::Free:
                // RMM logs one free; PyTorch's free_requested and free_completed are adjacent for
                // every block without stream uses, which is all an RMM log can express.
                entry.action = EventAction::FreeRequested;
                trace.entries.push_back(entry);
                entry.action = EventAction::FreeCompleted;
                trace.entries.push_back(entry);
                break;
            case formats::RmmAction::AllocateFailure:
                entry.action = EventAction::Oom;
                entry.address = 0;
                trace.entries.push_back(entry);
                break;
        }
    }
    return trace;
}

}  // namespace allocscope::storage

// ---- reading a file ----------------------------------------------------------------------------

namespace allocscope::storage {

std::vector<alloc::RecordedTrace> importTraceFile(const std::string& path) {
    // One detection and one read for every caller: TraceFile (which also names the file in errors).
    return TraceFile::load(path).traces;
}

}  // namespace allocscope::storage
