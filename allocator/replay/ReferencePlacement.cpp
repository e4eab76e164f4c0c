#include "allocator/replay/ReferencePlacement.h"

#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {

ReferencePlacement::ReferencePlacement(const RecordedTrace& recording)
    : ReferencePlacement(TraceSteps::segmentEvents(recording)) {}

ReferencePlacement::ReferencePlacement(const std::vector<StepSegmentEvent>& segmentEvents) {
    for (const StepSegmentEvent& e : segmentEvents) {
        if (e.action == EventAction::SegmentAlloc) allocs_.push_back(Recorded{e.address, e.size, e.step});
        if (e.action == EventAction::SegmentMap) maps_.push_back(Recorded{e.address, e.size, e.step});
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
