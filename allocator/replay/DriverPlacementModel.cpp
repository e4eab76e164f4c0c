#include "allocator/replay/DriverPlacementModel.h"

#include <algorithm>

#include "allocator/core/CachingAllocator.h"

namespace allocscope::alloc {
namespace {
constexpr std::uint64_t kGranularity = 2 * kMiB;  // the driver's VA granularity for device memory
constexpr std::uint64_t kLargeAlign = 32 * kMiB;  // new large ranges start on 32 MiB going down

std::uint64_t alignDown(std::uint64_t v, std::uint64_t a) { return v / a * a; }
std::uint64_t alignUp(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

DriverPlacementModel::DriverPlacementModel(const RecordedTrace& recording) : reference_(recording) {
    // Where the recorded process's driver started handing out memory: the first range this model
    // places without a recorded answer goes there.
    if (!reference_.segmentAllocs().empty()) start_ = reference_.segmentAllocs().front().address;
    if (!reference_.segmentMaps().empty() &&
        (start_ == 0 || reference_.segmentMaps().front().step < reference_.segmentAllocs().front().step)) {
        start_ = reference_.segmentMaps().front().address;
    }
    if (start_ == 0) start_ = 0x7f0000000000ull;  // an empty recording: a typical heap top
}

std::optional<std::uint64_t> DriverPlacementModel::sameStep(const PlacementRequest& request,
                                                            const std::map<std::uint64_t, std::uint64_t>& live,
                                                            std::size_t step) const {
    for (const ReferencePlacement::Recorded& a : reference_.segmentAllocs()) {
        if (a.step == step && a.size == request.size && !overlapsLive(live, a.address, a.size)) return a.address;
    }
    return std::nullopt;
}

std::uint64_t DriverPlacementModel::fresh(std::uint64_t requestSize, const std::map<std::uint64_t, std::uint64_t>& live) {
    const std::uint64_t size = alignUp(requestSize, kGranularity);
    if (size <= kGapFillLimit) {
        // Best fit among the gaps between live ranges (the lowest of equally good ones).
        std::optional<std::uint64_t> best;
        std::uint64_t bestGap = 0;
        std::uint64_t prevEnd = 0;
        for (const auto& [base, extent] : live) {
            if (prevEnd != 0 && base > prevEnd) {
                const std::uint64_t start = alignUp(prevEnd, kGranularity);
                const std::uint64_t gap = base > start ? base - start : 0;
                if (gap >= size && (!best || gap < bestGap)) {
                    best = start;
                    bestGap = gap;
                }
            }
            prevEnd = std::max(prevEnd, base + extent);
        }
        if (best) return *best;
    }
    if (frontier_ == 0 && !overlapsLive(live, start_, size)) return start_;
    std::uint64_t lowest = frontier_ == 0 ? start_ : frontier_;
    if (!live.empty()) lowest = std::min(lowest, live.begin()->first);
    std::uint64_t base = lowest - size;
    if (size > kSmallBuffer) base = alignDown(base, kLargeAlign);
    while (overlapsLive(live, base, size)) base -= kLargeAlign;
    return base;
}

std::optional<std::uint64_t> DriverPlacementModel::reservation(const PlacementRequest& request,
                                                               const std::map<std::uint64_t, std::uint64_t>& live,
                                                               std::size_t step) {
    // Reservations this model placed that are no longer live went back to the driver.
    for (auto it = reservations_.begin(); it != reservations_.end();) {
        if (!live.count(it->first)) {
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
            return base;
        }
    }
    std::optional<std::uint64_t> base = reference_.place(request, live, step);
    if (!base) base = fresh(request.size, live);
    return base;
}

std::optional<std::uint64_t> DriverPlacementModel::place(const PlacementRequest& request,
                                                         const std::map<std::uint64_t, std::uint64_t>& live,
                                                         std::size_t step) {
    std::optional<std::uint64_t> address;
    if (request.kind == PlacementRequest::Kind::Reservation) {
        address = reservation(request, live, step);
        if (address) reservations_[*address] = request.size;
    } else {
        address = sameStep(request, live, step);
        if (!address) address = fresh(request.size, live);
    }
    if (address) frontier_ = frontier_ == 0 ? *address : std::min(frontier_, *address);
    return address;
}

}  // namespace allocscope::alloc
