#pragma once
// The allocator's view of a recorded trace: what one device's allocator did in a real run, as
// PyTorch (or RMM) logged it. Built by storage/import (TraceImport) from a snapshot pickle or an
// RMM CSV; consumed by TraceReplayer. Standard library only: allocator/ never sees file formats.
//
// One RecordedTrace per device: a snapshot with several devices yields several, each replayed by
// its own allocator (PyTorch keeps one independent allocator per device).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/core/StackTable.h"
#include "allocator/core/SpillArray.h"

namespace allocscope::alloc {

// One trace entry, in PyTorch's vocabulary (reference §11.2).
// 24 bytes: a big snapshot has tens of millions of entries (issue #18), and the import writes each
// to a temporary file that the history check and the replay then read. Its time is not kept: only
// the import's placing of phase marks needs it, and the import keeps the times for that itself.
// Its stream is an index into the trace's few distinct streams (RecordedTrace::stream()).
struct RecordedEntry {
    EventAction action = EventAction::Alloc;
    std::uint16_t streamIndex = 0;  // into RecordedTrace::streams (0: the default stream)
    std::uint32_t stackId = 0;      // into RecordedTrace::stacks (0 = none)
    // Block / segment / mapped-range address. Oom: cudaMemGetInfo's free bytes at the failure, as
    // PyTorch's trace keeps it (its addr) and as the allocator's own Oom event does (Event.h).
    std::uint64_t address = 0;
    std::uint64_t size = 0;  // requested bytes (alloc/free), segment bytes, rounded (oom)
};
static_assert(sizeof(RecordedEntry) == 24);

// A record_function START/END marker placed before the entry it precedes in time. Its name is
// one of the trace's phaseNames: a training step repeats the same few names, and a big snapshot
// has hundreds of thousands of marks (a SpillArray of 16-byte values).
struct PhaseMark {
    std::size_t entryIndex = 0;  // the mark applies before entries[entryIndex] (may be size())
    std::uint32_t name = 0;      // into RecordedTrace::phaseNames
    bool begin = true;
};

struct RecordedTrace {
    std::string origin;  // human-readable: "snapshot device 0", "RMM CSV"
    std::int64_t device = 0;
    // The recorded PYTORCH_CUDA_ALLOC_CONF (allocator_settings). nullopt: the source does not
    // record settings (RMM CSV, old snapshots); a replay then defaults to PyTorch's defaults.
    std::optional<std::string> settings;
    // False when the source carries no segment events (RMM CSV): explicit empty_cache() calls
    // then cannot be seen, and a new segment's address is taken from the allocation it serves.
    bool hasSegmentEvents = true;
    // A big snapshot's millions of entries live in a temporary file, a window of them in memory
    // (SpillArray): readers that go through them say where they are with a SpillArray::Walk.
    SpillArray<RecordedEntry> entries;
    // The streams the entries name, each once; the default stream (0) is always index 0.
    std::vector<StreamId> streams{0};
    StreamId stream(const RecordedEntry& entry) const { return streams[entry.streamIndex]; }
    // The index of `stream` in `streams`, added the first time. Throws std::length_error for the
    // 65,537th distinct stream (PyTorch's stream pool has 32 per priority and device).
    std::uint16_t streamIndex(StreamId stream) {
        if (streams[lastStream_] == stream) return lastStream_;  // entries mostly repeat the last
        auto it = std::find(streams.begin(), streams.end(), stream);
        if (it == streams.end()) {
            if (streams.size() > 0xFFFF) throw std::length_error("a trace of more than 65,536 streams is more than a replay takes");
            it = streams.insert(streams.end(), stream);
        }
        lastStream_ = static_cast<std::uint16_t>(it - streams.begin());
        return lastStream_;
    }
    StackTable stacks;
    SpillArray<PhaseMark> phases;         // in entry order
    std::vector<std::string> phaseNames;  // each distinct name once
    const std::string& phaseName(const PhaseMark& mark) const { return phaseNames.at(mark.name); }
    // The allocator state when the snapshot was taken (its `segments` for this device), when the
    // source has one: a replay must end in exactly this layout.
    std::optional<std::vector<SegmentInfo>> finalSegments;

private:
    std::uint16_t lastStream_ = 0;  // streamIndex()'s last answer
};

}  // namespace allocscope::alloc
