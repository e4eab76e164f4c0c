#pragma once
// The driver's state that a PyTorch process's recording does not show, inferred from the
// recording itself. DriverVaHeap's rules were fitted to bare-driver processes; in a PyTorch
// process the runtime (CUDA libraries, kernel loading) also takes and gives back address space,
// and the recorded segments land where those unrecorded ranges leave room. Replaying the
// recording's own segment calls through the rules from a fresh process shows where: wherever the
// rules put a recorded segment elsewhere than the driver did, a change of the hidden state that
// makes the rules agree is inferred, of three kinds:
// - Hidden: a range the runtime took, by the same rules (the rules' answer was taken);
// - Released: address space above everything the heap knows, given back to the driver (a
//   recorded segment opened a chunk there, at the top of a released range);
// - RuntimeReleased: the runtime's region above the first new chunk went back (a recorded segment
//   landed in it).
// The recording only bounds *when* a change happened: before the placement that showed it, and
// after every earlier placement it would have moved. Each change is dated at the earliest step
// (not before the change before it) at which the rules still reproduce every recorded placement
// they reproduced: a what-if's process makes other calls at other steps, and a change dated too
// late would leave it a state the real process no longer had. A what-if replay then starts from
// the same fresh heap and applies each change when its step comes (DriverPlacementModel).
//
// Only the recording is used, never what the what-if config measured.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "allocator/replay/DriverVaHeap.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {

class HiddenRangeCalibration {
public:
    struct Change {
        enum class Kind { Hidden, Released, RuntimeReleased };
        Kind kind = Kind::Hidden;
        std::size_t step = 0;     // applied before the replay's first placement at this step or later
        std::uint64_t base = 0;   // Released: its base
        std::uint64_t size = 0;   // Hidden, Released: bytes
    };

    // Recordings with expandable reservations or without cudaMalloc segments have nothing to
    // calibrate; longer ones than this are not calibrated (the search replays the recording many
    // times).
    static constexpr std::size_t kMaxSegmentEvents = 256;
    // Nor is a recording that does not look like the rules plus a few hidden ranges: one that
    // needs a change at more than one placement in four, or whose placements the rules cannot
    // explain at more than one in eight (counted as the search goes, which also bounds its cost).
    static constexpr std::size_t kMaxChangeShare = 4;
    static constexpr std::size_t kMaxUnexplainedShare = 8;
    static std::optional<HiddenRangeCalibration> fromRecording(const RecordedTrace& recording);
    // The same from the recording's segment events (TraceSteps::segmentEvents).
    static std::optional<HiddenRangeCalibration> fromSegmentEvents(const std::vector<StepSegmentEvent>& events);

    std::uint64_t heapTop() const { return top_; }
    const std::vector<Change>& changes() const { return changes_; }
    std::size_t placements() const { return placements_; }
    // Recorded placements the calibrated rules put at the recorded address.
    std::size_t reproduced() const { return reproduced_; }

    // Applies the changes due at `step` (those from `next` on), advancing `next`.
    void applyDue(DriverVaHeap& heap, std::size_t step, std::size_t& next) const;
    static void apply(DriverVaHeap& heap, const Change& change);

private:
    struct SegmentCall {
        std::size_t step = 0;
        bool alloc = true;  // cudaMalloc; else cudaFree
        std::uint64_t base = 0;
        std::uint64_t size = 0;
    };

    bool infer();  // false when the recording does not look like the rules (kMax*Share)
    std::optional<std::vector<Change>> explain(const DriverVaHeap& heap, const SegmentCall& call) const;
    std::size_t misses(const std::vector<Change>& changes) const;  // recorded placements the rules miss
    void moveEarlier();

    std::vector<SegmentCall> calls_;
    std::uint64_t top_ = 0;
    std::vector<Change> changes_;
    std::size_t placements_ = 0;
    std::size_t reproduced_ = 0;
};

}  // namespace allocscope::alloc
