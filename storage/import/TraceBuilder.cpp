#include "storage/import/TraceBuilder.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>

#include "allocator/replay/TraceSteps.h"
#include "storage/formats/FormatError.h"
#include "storage/import/FrameLine.h"

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

// Places each record_function marker before the first entry recorded at or after its time. A
// marker whose device or time is unknown (did not fit int64) cannot be placed and is left out.
// The markers are searched for in time order, each from where the one before it landed
// (galloping, then binary search): a big trace's entries live in a file (SpillArray), and binary
// searches over all of them would bring every page of it into memory, one marker at a time.
void placePhases(RecordedTrace& trace, const alloc::SpillArray<std::int64_t>& times,
                 const std::vector<formats::Annotation>& annotations) {
    std::vector<std::pair<std::int64_t, std::size_t>> byTime;  // (time, annotation)
    for (std::size_t i = 0; i < annotations.size(); ++i) {
        const formats::Annotation& a = annotations[i];
        if (!a.device || !a.time_us || *a.device != trace.device) continue;
        if (a.stage != "START" && a.stage != "END") continue;
        byTime.emplace_back(*a.time_us, i);
    }
    std::sort(byTime.begin(), byTime.end());
    alloc::SpillArray<std::int64_t>::Walk walk(times);
    std::vector<std::size_t> at(annotations.size(), alloc::kNoEntry);  // where each one goes
    std::size_t from = 0;
    for (const auto& [time, i] : byTime) {
        std::size_t step = 1;
        while (from + step <= times.size() && times[from + step - 1] < time) step *= 2;
        const std::size_t lo = from + step / 2;
        const std::size_t hi = std::min(from + step, times.size());
        from = static_cast<std::size_t>(std::lower_bound(times.begin() + lo, times.begin() + hi, time) - times.begin());
        walk.at(from);
        at[i] = from;
    }
    times.forget(0, times.size());
    std::unordered_map<std::string, std::uint32_t> nameIds;
    for (std::size_t i = 0; i < annotations.size(); ++i) {
        if (at[i] == alloc::kNoEntry) continue;
        const auto [name, added] = nameIds.try_emplace(annotations[i].name, static_cast<std::uint32_t>(trace.phaseNames.size()));
        if (added) trace.phaseNames.push_back(annotations[i].name);
        trace.phases.push_back(alloc::PhaseMark{at[i], name->second, annotations[i].stage == "START"});
    }
    std::stable_sort(trace.phases.begin(), trace.phases.end(),
                     [](const alloc::PhaseMark& x, const alloc::PhaseMark& y) { return x.entryIndex < y.entryIndex; });
}

}  // namespace

std::uint32_t TraceBuilder::Stacks::intern(const formats::FrameList& frames) {
    if (frames.empty()) return 0;
    auto [it, added] = ids_.try_emplace(frames.identity(), frames, 0);
    if (added) it->second.second = table_.intern(toStack(frames));
    return it->second.second;
}

TraceBuilder::Device& TraceBuilder::device(std::int64_t device) {
    // Every entry asks, nearly always for the device the last one asked for (map nodes stay put).
    if (lastDevice_ != nullptr && lastDeviceIndex_ == device) return *lastDevice_;
    auto [it, added] = devices_.try_emplace(device);
    lastDevice_ = &it->second;
    lastDeviceIndex_ = device;
    if (added) {
        it->second.trace.device = device;
        it->second.stacks = std::make_unique<Stacks>(it->second.trace.stacks);
        it->second.trace.entries.reserve(expected_);
        it->second.times.reserve(expected_);
        expected_ = 0;
    }
    return it->second;
}

void TraceBuilder::reserve(std::size_t deviceIndex, std::size_t entries) {
    Device& d = device(static_cast<std::int64_t>(deviceIndex));
    RecordedTrace& trace = d.trace;
    trace.entries.reserve(trace.entries.size() + entries);
    d.times.reserve(d.times.size() + entries);
}

// Appends the entries of one trace entry (a legacy "free" becomes both halves of a free).
void TraceBuilder::onEntry(std::size_t deviceIndex, std::size_t index, const formats::TraceEntry& e) {
    // The distinct user_metadata strings, in the order they first appear (a streamed file is not
    // held afterwards, so they are gathered here; entries repeat one string, so this is cheap).
    if (!e.user_metadata.empty() && userMetadata.size() < maxMetadata && e.user_metadata.str() != lastMetadata_) {
        lastMetadata_ = e.user_metadata.str();
        if (std::find(userMetadata.begin(), userMetadata.end(), lastMetadata_) == userMetadata.end()) userMetadata.push_back(lastMetadata_);
    }
    Device& d = device(static_cast<std::int64_t>(deviceIndex));
    RecordedTrace& trace = d.trace;
    const KnownAction& known = classify(e.action);
    // Entries that carry no allocator decision: annotations (2024 pseudo-events, 2026 annotate).
    if (known.kind == ActionKind::Ignored) return;
    const bool legacyFree = known.kind == ActionKind::LegacyFree;
    if (known.kind == ActionKind::Unknown) {
        throw formats::FormatError("unknown trace action '" + e.action.str() + "'", entryWhere(deviceIndex, index));
    }
    const std::optional<EventAction> action = legacyFree ? std::nullopt : std::optional<EventAction>(known.action);
    RecordedEntry entry;
    entry.size = e.size;
    entry.streamIndex = trace.streamIndex(e.stream);
    const std::int64_t time = e.time_us_unknown ? 0 : e.time_us;  // 0: no usable clock
    entry.stackId = d.stacks->intern(e.frames);
    if (action == EventAction::Oom) {
        entry.action = EventAction::Oom;
        entry.address = e.device_free;
        trace.entries.push_back(entry);
        d.times.push_back(time);
        return;
    }
    if (!e.has_addr && action != EventAction::Snapshot) {
        throw formats::FormatError("trace entry '" + e.action.str() + "' has no addr", entryWhere(deviceIndex, index));
    }
    entry.address = e.addr;
    if (legacyFree) {
        entry.action = EventAction::FreeRequested;
        trace.entries.push_back(entry);
        entry.action = EventAction::FreeCompleted;
        trace.entries.push_back(entry);
        d.times.push_back(time);
        d.times.push_back(time);
        return;
    }
    entry.action = *action;
    trace.entries.push_back(entry);
    d.times.push_back(time);
}

const TraceBuilder::KnownAction& TraceBuilder::classify(const formats::SharedString& name) {
    for (const KnownAction& known : actions_) {
        if (known.name.sharesWith(name)) return known;
    }
    KnownAction known;
    known.name = name;
    if (name.str() == "annotate" || name.str() == "user_defined") {
        known.kind = ActionKind::Ignored;
    } else if (name.str() == "free") {
        known.kind = ActionKind::LegacyFree;
    } else if (const std::optional<EventAction> action = alloc::actionFromName(name.str())) {
        known.kind = ActionKind::Action;
        known.action = *action;
    }
    // A few distinct strings in a real snapshot; a hostile one could have a new string per entry:
    // those are classified each time rather than remembered.
    if (actions_.size() < 32) {
        actions_.push_back(std::move(known));
        return actions_.back();
    }
    lastClassified_ = std::move(known);
    return lastClassified_;
}

formats::ColdBytes* TraceBuilder::coldBytes() {
    if (!memo_) memo_ = std::make_unique<SpilledColdBytes>();
    return memo_.get();
}

std::vector<RecordedTrace> TraceBuilder::finish(const formats::Snapshot& rest) {
    memo_.reset();  // the read is over: its memo is gone, and the temporary file can go too
    for (const formats::SnapshotSegment& seg : rest.segments) {
        if (seg.device >= 0) device(seg.device);  // -1: pinned host segments, not ours
    }
    std::vector<RecordedTrace> traces;
    for (auto& [id, d] : devices_) {
        RecordedTrace& trace = d.trace;
        trace.entries.doneWriting();  // a big trace's: nothing of it stays resident ahead of its end
        trace.origin = "snapshot device " + std::to_string(id);
        if (rest.allocator_settings.present && rest.allocator_settings.conf) trace.settings = *rest.allocator_settings.conf;
        std::vector<alloc::SegmentInfo> segments;
        for (std::size_t s = 0; s < rest.segments.size(); ++s) {
            const formats::SnapshotSegment& seg = rest.segments[s];
            if (seg.device != id) continue;
            const std::string where = "segments[" + std::to_string(s) + "]";
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
            info.stackId = d.stacks->intern(seg.frames);
            for (std::size_t b = 0; b < seg.blocks.size(); ++b) {
                const formats::SnapshotBlock& block = seg.blocks[b];
                alloc::BlockInfo bi;
                bi.address = block.address;
                bi.size = block.size;
                bi.requestedSize = block.requested_size;
                bi.state = blockState(block.state, where + ".blocks[" + std::to_string(b) + "]");
                bi.stackId = d.stacks->intern(block.frames);
                info.blocks.push_back(bi);
            }
            segments.push_back(std::move(info));
        }
        std::sort(segments.begin(), segments.end(),
                  [](const alloc::SegmentInfo& a, const alloc::SegmentInfo& b) { return a.address < b.address; });
        trace.finalSegments = std::move(segments);
        d.times.doneWriting();
        placePhases(trace, d.times, rest.external_annotations);
        traces.push_back(std::move(trace));
    }
    devices_.clear();
    lastDevice_ = nullptr;
    return traces;
}

}  // namespace allocscope::storage
