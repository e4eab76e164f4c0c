#include "allocator/device/cuda/RecordedSegmentAddresses.h"

#include <algorithm>
#include <map>

namespace allocscope::alloc {

RecordedSegmentAddresses::RecordedSegmentAddresses(const std::vector<Event>& events) {
    // A reservation has no event of its own: it shows as the `segment` of its segment_map events.
    // It lives until its last mapped page is unmapped (the allocator then releases it), so a base
    // seen again after that is a new reservation and is handed out again.
    std::map<std::uint64_t, std::uint64_t> mapped;  // live reservation base -> mapped bytes
    for (const Event& e : events) {
        if (e.action == EventAction::SegmentAlloc) segments_.emplace_back(e.size, e.address);
        if (e.action == EventAction::SegmentMap) {
            if (mapped.find(e.segment) == mapped.end()) reservations_.push_back(e.segment);
            mapped[e.segment] += e.size;
        }
        if (e.action == EventAction::SegmentUnmap) {
            auto it = mapped.find(e.segment);
            if (it != mapped.end() && (it->second -= std::min(it->second, e.size)) == 0) mapped.erase(it);
        }
    }
}

std::optional<std::uint64_t> RecordedSegmentAddresses::next(const PlacementRequest& request) {
    if (request.kind == PlacementRequest::Kind::Segment) {
        if (segments_.empty() || segments_.front().first != request.size) {
            ++misses_;
            return std::nullopt;
        }
        const std::uint64_t address = segments_.front().second;
        segments_.pop_front();
        return address;
    }
    if (reservations_.empty()) {
        ++misses_;
        return std::nullopt;
    }
    const std::uint64_t address = reservations_.front();
    reservations_.pop_front();
    return address;
}

}  // namespace allocscope::alloc
