#pragma once
// The allocator's view of a recorded trace: what one device's allocator did in a real run, as
// PyTorch (or RMM) logged it. Built by storage/import (TraceImport) from a snapshot pickle or an
// RMM CSV; consumed by TraceReplayer. Standard library only: allocator/ never sees file formats.
//
// One RecordedTrace per device: a snapshot with several devices yields several, each replayed by
// its own allocator (PyTorch keeps one independent allocator per device).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/core/StackTable.h"
#include "allocator/core/SpillArray.h"

namespace allocscope::alloc {

// One trace entry, in PyTorch's vocabulary (reference §11.2).
// 32 bytes: a big snapshot has tens of millions of entries (issue #18), and the import writes each
// to a temporary file that the history check and the replay then read. Its time is not kept: only
// the import's placing of phase marks needs it, and the import keeps the times for that itself.
struct RecordedEntry {
    EventAction action = EventAction::Alloc;
    std::uint32_t stackId = 0;  // into RecordedTrace::stacks (0 = none)
    // Block / segment / mapped-range address. Oom: cudaMemGetInfo's free bytes at the failure, as
    // PyTorch's trace keeps it (its addr) and as the allocator's own Oom event does (Event.h).
    std::uint64_t address = 0;
    std::uint64_t size = 0;  // requested bytes (alloc/free), segment bytes, rounded (oom)
    StreamId stream = 0;
};
static_assert(sizeof(RecordedEntry) == 32);

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
    StackTable stacks;
    SpillArray<PhaseMark> phases;         // in entry order
    std::vector<std::string> phaseNames;  // each distinct name once
    const std::string& phaseName(const PhaseMark& mark) const { return phaseNames.at(mark.name); }
    // The allocator state when the snapshot was taken (its `segments` for this device), when the
    // source has one: a replay must end in exactly this layout.
    std::optional<std::vector<SegmentInfo>> finalSegments;
};

}  // namespace allocscope::alloc
