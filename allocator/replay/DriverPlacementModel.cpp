#include "allocator/replay/DriverPlacementModel.h"

#include <algorithm>

#include "allocator/core/CachingAllocator.h"

namespace allocscope::alloc {
namespace {
constexpr std::uint64_t kGranularity = 2 * kMiB;  // the driver's VA granularity for device memory
constexpr std::uint64_t kLargeAlign = 32 * kMiB;  // large ranges start on 32 MiB going down

std::uint64_t alignDown(std::uint64_t v, std::uint64_t a) { return v / a * a; }
std::uint64_t alignUp(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

DriverPlacementModel::DriverPlacementModel(const RecordedTrace& recording) : reference_(recording) {
    for (const ReferencePlacement::Recorded& r : reference_.segmentAllocs()) {
        top_ = std::max(top_, r.address + r.size);
        frontier_ = frontier_ == 0 ? r.address : std::min(frontier_, r.address);
    }
    for (const ReferencePlacement::Recorded& r : reference_.segmentMaps()) {
        top_ = std::max(top_, r.address + r.size);
        frontier_ = frontier_ == 0 ? r.address : std::min(frontier_, r.address);
    }
    if (top_ == 0) top_ = frontier_ = 0x7f0000000000ull;  // an empty recording: a typical heap top
}

std::optional<std::uint64_t> DriverPlacementModel::fresh(const PlacementRequest& request,
                                                         const std::map<std::uint64_t, std::uint64_t>& live) {
    const std::uint64_t size = alignUp(request.size, kGranularity);
    // Fill a gap between live ranges first (lowest gap above the frontier that fits).
    std::uint64_t cursor = frontier_;
    for (auto it = live.lower_bound(frontier_); it != live.end(); ++it) {
        if (it->first >= cursor + size && cursor + size <= top_) return cursor;
        cursor = std::max(cursor, alignUp(it->first + it->second, kGranularity));
    }
    // Below everything handed out so far.
    std::uint64_t base = frontier_ - size;
    if (size > kSmallBuffer) base = alignDown(base, kLargeAlign);
    while (overlapsLive(live, base, size)) base -= kLargeAlign;
    frontier_ = base;
    return base;
}

std::optional<std::uint64_t> DriverPlacementModel::place(const PlacementRequest& request,
                                                         const std::map<std::uint64_t, std::uint64_t>& live,
                                                         std::size_t step) {
    if (request.kind == PlacementRequest::Kind::Reservation) {
        // Reservations this model placed that are no longer live went back to the driver.
        for (auto it = reservations_.begin(); it != reservations_.end();) {
            auto l = live.find(it->first);
            if (l == live.end()) {
                releasedReservations_.push_back(it->first);
                it = reservations_.erase(it);
            } else {
                ++it;
            }
        }
        for (auto it = releasedReservations_.begin(); it != releasedReservations_.end(); ++it) {
            if (!overlapsLive(live, *it, request.size)) {
                const std::uint64_t base = *it;
                releasedReservations_.erase(it);
                reservations_[base] = request.size;
                return base;
            }
        }
    }
    std::optional<std::uint64_t> address = reference_.place(request, live, step);
    if (!address) address = fresh(request, live);
    if (address && request.kind == PlacementRequest::Kind::Reservation) reservations_[*address] = request.size;
    if (address) frontier_ = std::min(frontier_, *address);
    return address;
}

}  // namespace allocscope::alloc
