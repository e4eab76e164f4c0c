#pragma once
// Where a recorded history starts. `_record_memory_history(max_entries=N)` keeps only the last N
// trace entries (a ring buffer) and `enabled="state"` keeps one, but the snapshot's `segments` are
// always the whole final state. Starting from that state and undoing the recorded entries newest
// first (HistoryRewind) leaves the state before the oldest entry: blocks freed but never allocated
// in the window were live already, segments released but never allocated existed already.
//
// The history is truncated when that state is not empty: some entry refers to a block or segment
// the window did not create (a free_requested without its alloc), or the trace is (almost) empty
// while the final state is not. A trace recorded from the start of the process rewinds to nothing
// and is replayed exactly as before. When an entry does not fit the rewound state (the trace and
// its segments do not belong together, or a block size guess failed: see HistoryRewind), nothing
// is restored and problem() says which entry; except for the lone entry of a state-only
// snapshot: the final state is restored as it is, and the replay notes the entry.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

// What a replay says about a history that starts mid-run (ReplayResult::truncation).
struct HistoryTruncation {
    std::uint64_t blocks = 0;  // allocated or pending-free blocks live before the first recorded entry
    std::uint64_t bytes = 0;   // their sizes
    bool noHistory = false;    // a state-only snapshot: at most one stray entry besides the final state
    // The events that rebuilt that state (cause "restored"): they come first in the replay's
    // event stream, so the recorded history starts at this event.
    std::uint64_t restoredEvents = 0;
};

class HistoryWindow {
public:
    // Block sizes are rounded as the recording rounded them: under trace.settings, or `fallback`
    // when the trace does not record its settings.
    HistoryWindow(const RecordedTrace& trace, const AllocatorConfig& fallback);

    bool truncated() const { return truncated_; }
    // The state before entry firstEntry(), as a snapshot lists it (empty unless truncated).
    const std::vector<SegmentInfo>& initialSegments() const { return initial_; }
    std::uint64_t liveBlocks() const { return liveBlocks_; }
    std::uint64_t liveBytes() const { return liveBytes_; }
    // The entry the restored state precedes: the rewind always runs to the oldest entry, so 0.
    std::size_t firstEntry() const { return 0; }
    bool noHistory() const { return noHistory_; }
    // Why the trace could not be rewound ("" when it could, or has no final segments).
    const std::string& problem() const { return problem_; }
    // Set when truncated (restoredEvents left 0: the replay counts them).
    std::optional<HistoryTruncation> truncation() const;

    // The memory_stats() keys that count only the recorded window after a truncated history:
    // every peak, allocated and freed total and the num_* counters. PyTorch counted from the
    // start of the process; a replay can only count from the restored state.
    static std::vector<std::string> windowOnlyKeys();

private:
    std::vector<SegmentInfo> initial_;
    std::uint64_t liveBlocks_ = 0;
    std::uint64_t liveBytes_ = 0;
    bool truncated_ = false;
    bool noHistory_ = false;
    std::string problem_;
};

}  // namespace allocscope::alloc
