#pragma once
// The allocator's state at any event of a recorded run: the nearest keyframe at or before it
// plus the events (and stats fixups) since, applied to a SegmentStateModel. Once loaded, the
// cursor steps one event forward (apply) or back (undo from a journal of the last events; past
// its depth, a reload).
#include <cstdint>
#include <deque>

#include "storage/session/SegmentStateModel.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

class StateCursor {
public:
    StateCursor(SessionReader& reader, int run);

    // State right after event `seq` (< the run's event count).
    StateAtEvent load(std::uint64_t seq);
    // The same without building the SegmentInfo list (when only the model is needed).
    void loadModel(std::uint64_t seq);
    // Moves forward to `seq` (>= the loaded event) applying events in bulk, without journal.
    void advanceTo(std::uint64_t seq);
    // One event forward (+1) or back (-1) from the loaded event; the result as load() gives it.
    StateAtEvent step(int direction);
    bool stepModel(int direction);

    const SegmentStateModel& model() const { return model_; }
    std::uint64_t seq() const { return seq_; }
    std::uint64_t eventCount() const { return eventCount_; }
    StateAtEvent current();

    static constexpr std::size_t kJournalDepth = 256;

private:
    void applyNext(bool journal);

    SessionReader& reader_;
    int run_;
    std::uint64_t eventCount_ = 0;
    std::uint64_t seq_ = 0;
    bool loaded_ = false;
    SegmentStateModel model_;
    std::deque<SegmentStateModel::Journal> journals_;
    std::vector<std::pair<std::uint64_t, alloc::DeviceStats>> fixups_;  // of the loaded stretch
};

}  // namespace allocscope::storage
