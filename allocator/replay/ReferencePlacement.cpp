#include "allocator/replay/ReferencePlacement.h"

#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {

ReferencePlacement::ReferencePlacement(const RecordedTrace& recording) {
    const SpillArray<TraceStep> steps = TraceSteps::cut(recording);
    for (std::size_t k = 0; k < steps.size(); ++k) {
        for (std::size_t i = steps[k].begin; i < steps[k].end; ++i) {
            const RecordedEntry& e = recording.entries[i];
            if (e.action == EventAction::SegmentAlloc) allocs_.push_back(Recorded{e.address, e.size, k});
            if (e.action == EventAction::SegmentMap) maps_.push_back(Recorded{e.address, e.size, k});
        }
    }
}

std::optional<std::uint64_t> ReferencePlacement::place(const PlacementRequest& request,
                                                       const std::map<std::uint64_t, std::uint64_t>& live,
                                                       std::size_t step) {
    if (request.kind == PlacementRequest::Kind::Reservation) {
        for (const Recorded& m : maps_) {
            if (m.step == step && !overlapsLive(live, m.address, 1)) return m.address;
        }
        for (const Recorded& m : maps_) {
            if (!overlapsLive(live, m.address, request.size)) return m.address;
        }
        return std::nullopt;
    }
    const Recorded* best = nullptr;
    std::size_t bestDistance = 0;
    for (const Recorded& a : allocs_) {
        if (a.size != request.size || overlapsLive(live, a.address, a.size)) continue;
        const std::size_t distance = a.step > step ? a.step - step : step - a.step;
        if (!best || distance < bestDistance) {
            best = &a;
            bestDistance = distance;
        }
    }
    if (best) return best->address;
    return std::nullopt;
}

}  // namespace allocscope::alloc
