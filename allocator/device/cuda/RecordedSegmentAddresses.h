#pragma once
// An address oracle that hands out, in order, the segment and reservation addresses a simulated
// run used (read from its events). A SimulatedDevice asking it while deciding the same program
// again decides exactly what the simulated run decided; CudaDevice in translation mode then backs
// each decided address with real memory. This is how a replay that needed the recording (address
// per step, inferred empty_cache() calls, placement models) runs again on a real GPU.
//
// CUDA-free: only the decisions of the simulated run are read.
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc {

class RecordedSegmentAddresses {
public:
    explicit RecordedSegmentAddresses(const std::vector<Event>& events);

    // The next recorded address for this request; nullopt (counted as a miss) when the run asks
    // for something the recorded run did not do at this point (another size, no more segments).
    std::optional<std::uint64_t> next(const PlacementRequest& request);
    std::uint64_t misses() const { return misses_; }
    // Recorded addresses never asked for (non-zero: the second run made fewer segments).
    std::uint64_t unused() const { return segments_.size() + reservations_.size(); }

private:
    std::deque<std::pair<std::uint64_t, std::uint64_t>> segments_;  // (size, address)
    std::deque<std::uint64_t> reservations_;
    std::uint64_t misses_ = 0;
};

}  // namespace allocscope::alloc
