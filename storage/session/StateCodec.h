#pragma once
// Keyframes and statistics as compact BLOBs: DeviceStats as its 122 values in a fixed order,
// a keyframe as the stats plus every segment and block of the model (addresses as deltas).
#include <string>
#include <string_view>

#include "allocator/core/DeviceStats.h"
#include "storage/session/SegmentStateModel.h"

namespace allocscope::storage {

class StateCodec {
public:
    static std::string encodeStats(const alloc::DeviceStats& stats);
    static alloc::DeviceStats decodeStats(std::string_view blob);
    static std::string encodeKeyframe(const SegmentStateModel& model);
    // Replaces the model's layout and stats; model.applied() becomes `seq`.
    static void decodeKeyframe(std::string_view blob, std::uint64_t seq, SegmentStateModel& model);
};

}  // namespace allocscope::storage
