#pragma once
// The live blocks of a recorded run at one point: the tensors the program holds there (PyTorch's
// `active_allocated` blocks) and the ones it freed that still wait for another stream
// (`active_pending_free`). Built from the session's own state at an event (StateCursor), so it is
// the same for a run recorded by a workload, a replay or an import. The points a user names:
// the run's end, its peak (the first event where allocated bytes reach their maximum), an event
// number, or -- for a run imported from a snapshot -- "just after trace entry K".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/PoolId.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/core/StackTable.h"
#include "storage/session/SessionReader.h"

namespace allocscope::storage {

struct LiveBlock {
    std::uint64_t address = 0;
    std::uint64_t size = 0;           // block bytes (what allocated_bytes counts)
    std::uint64_t requestedSize = 0;  // what the program asked for
    std::uint64_t stream = 0;
    std::uint64_t segment = 0;        // the segment's address (an expandable reservation's base)
    alloc::PoolId pool;               // the segment's segment_pool_id ((0,0): the default pool)
    alloc::PoolKind poolKind = alloc::PoolKind::Large;
    alloc::BlockState state = alloc::BlockState::ActiveAllocated;
    std::optional<std::uint64_t> allocEvent;  // the event that allocated it; nullopt if not in the run
    bool restored = false;                    // live before the recorded history started
    std::optional<std::uint64_t> allocEntry;  // the trace entry of allocEvent (entryOf); nullopt if none
    std::uint32_t stackId = 0;
};

// A point of a run, as the CLI's --at takes it: "end", "peak", "event:E", "entry:K".
struct RunPoint {
    enum class Kind { End, Peak, Event, Entry } kind = Kind::End;
    std::uint64_t value = 0;  // E or K
    // Parses the text; nullopt (with *why) when it is none of the four forms.
    static std::optional<RunPoint> parse(const std::string& text, std::string* why = nullptr);
    std::string text() const;
};

class LiveBlocks {
public:
    // The event a point names in run `run`. SessionError (saying why) when the run has no such
    // event: past its end, an empty run, or entry:K of a run whose events do not follow its trace
    // entries one to one (only an exact import does; a diverged one up to its first difference).
    static std::uint64_t eventOf(SessionReader& reader, int run, const RunPoint& point);
    // The first event at which allocated bytes reach their maximum over the run.
    static std::uint64_t peakEvent(SessionReader& reader, int run);
    // The trace entry an event replayed, when the run's events follow its trace one to one.
    static std::optional<std::uint64_t> entryOf(SessionReader& reader, int run, std::uint64_t event);
    // The live blocks right after event `seq`, by address.
    static std::vector<LiveBlock> at(SessionReader& reader, int run, std::uint64_t seq);
};

}  // namespace allocscope::storage
