#include "allocator/replay/DriverPlacementModel.h"

#include <algorithm>

namespace allocscope::alloc {
namespace {
// Where a fresh process's heap starts when there is no recording to take it from (any 32 MiB
// aligned address: only addresses relative to the first matter).
constexpr std::uint64_t kFreshHeapTop = 0x7f0000000000ull;

std::uint64_t chunkSize(std::uint64_t size) {
    return (size + DriverVaHeap::kChunk - 1) / DriverVaHeap::kChunk * DriverVaHeap::kChunk;
}
}  // namespace

DriverPlacementModel::DriverPlacementModel(const RecordedTrace& recording)
    : DriverPlacementModel(TraceSteps::segmentEvents(recording)) {}

// The reference placement and the calibration from one pass over the recording.
DriverPlacementModel::DriverPlacementModel(const std::vector<StepSegmentEvent>& segmentEvents) : reference_(segmentEvents) {
    // New chunks of a recorded process go below its first range (its runtime's ranges are above).
    if (!reference_.segmentAllocs().empty()) start_ = reference_.segmentAllocs().front().address;
    if (!reference_.segmentMaps().empty() &&
        (start_ == 0 || reference_.segmentMaps().front().step < reference_.segmentAllocs().front().step)) {
        start_ = reference_.segmentMaps().front().address;
    }
    recorded_ = start_ != 0;
    if (recorded_) calibration_ = HiddenRangeCalibration::fromSegmentEvents(segmentEvents);
    restart();
}

void DriverPlacementModel::restart() {
    heap_ = DriverVaHeap{};
    nextChange_ = 0;
    if (calibration_) {
        heap_.startFreshProcess(calibration_->heapTop());
    } else if (recorded_) {
        heap_.startBelow(start_);
    } else {
        heap_.startFreshProcess(kFreshHeapTop);
    }
    reservations_.clear();
    releasedReservations_.clear();
    recordedLive_.clear();
}

bool DriverPlacementModel::inRecordedState(const std::map<std::uint64_t, std::uint64_t>& live) {
    for (auto it = recordedLive_.begin(); it != recordedLive_.end();) {
        it = live.count(*it) ? std::next(it) : recordedLive_.erase(it);
    }
    return std::all_of(live.begin(), live.end(), [this](const auto& range) { return recordedLive_.count(range.first) != 0; });
}

std::uint64_t DriverPlacementModel::take(std::uint64_t address, std::uint64_t size) {
    // Where the heap's rules give the same answer, they place it (the chunk's tail stays theirs
    // to fill); else the range is inserted where it is.
    DriverVaHeap trial = heap_;
    if (trial.allocate(size) == address) return heap_.allocate(size);
    heap_.insert(address, size, false);
    return address;
}

std::optional<std::uint64_t> DriverPlacementModel::sameStep(const PlacementRequest& request,
                                                            const std::map<std::uint64_t, std::uint64_t>& live,
                                                            std::size_t step) const {
    for (const ReferencePlacement::Recorded& a : reference_.segmentAllocs()) {
        if (a.step == step && a.size == request.size && !overlapsLive(live, a.address, a.size)) return a.address;
    }
    // A recorded segment that opened a chunk (its base on a chunk boundary) in this step: the
    // driver, in the same state, opens the same chunk for any size that needs a chunk as large.
    for (const ReferencePlacement::Recorded& a : reference_.segmentAllocs()) {
        if (a.step == step && a.address % DriverVaHeap::kChunk == 0 &&
            chunkSize(a.size) == chunkSize(request.size) && !overlapsLive(live, a.address, request.size)) {
            return a.address;
        }
    }
    return std::nullopt;
}

std::optional<std::uint64_t> DriverPlacementModel::reservation(const PlacementRequest& request,
                                                               const std::map<std::uint64_t, std::uint64_t>& live,
                                                               std::size_t step) {
    if (!recorded_) return heap_.reserve(request.size);
    // Reservations this model placed that are no longer live went back to the driver.
    for (auto it = reservations_.begin(); it != reservations_.end();) {
        if (!live.count(it->first)) {
            releasedReservations_.push_back(it->first);
            it = reservations_.erase(it);
        } else {
            ++it;
        }
    }
    std::optional<std::uint64_t> base;
    for (auto it = releasedReservations_.begin(); it != releasedReservations_.end(); ++it) {
        if (!overlapsLive(live, *it, request.size)) {
            base = *it;
            releasedReservations_.erase(it);
            break;
        }
    }
    if (!base) base = reference_.place(request, live, step);
    if (!base) return heap_.reserve(request.size);
    heap_.insert(*base, request.size, true);
    return base;
}

std::optional<std::uint64_t> DriverPlacementModel::place(const PlacementRequest& request,
                                                         const std::map<std::uint64_t, std::uint64_t>& live,
                                                         std::size_t step) {
    // One model serves several replays of a trace (a what-if first learns from an exact replay,
    // the pool inference replays again): each is a process of its own and starts afresh.
    if (step < lastStep_) restart();
    lastStep_ = step;
    heap_.sync(live);
    if (calibration_) calibration_->applyDue(heap_, step, nextChange_);
    if (request.kind == PlacementRequest::Kind::Reservation) {
        const std::optional<std::uint64_t> base = reservation(request, live, step);
        if (base) reservations_[*base] = request.size;
        return base;
    }
    // The recording's answers hold while the what-if's driver is in the recorded state; a
    // calibrated heap answers alone once the what-if's calls made the state differ (the
    // recording's answer was the recorded process's, whose hidden ranges it calibrated).
    if (!calibration_ || inRecordedState(live)) {
        if (const std::optional<std::uint64_t> recorded = sameStep(request, live, step)) {
            if (!calibration_) {
                heap_.insert(*recorded, request.size, false);
                return recorded;
            }
            take(*recorded, request.size);
            for (const ReferencePlacement::Recorded& a : reference_.segmentAllocs()) {
                if (a.step == step && a.size == request.size && a.address == *recorded) recordedLive_.insert(*recorded);
            }
            return recorded;
        }
    }
    const std::uint64_t address = heap_.allocate(request.size);
    // The heap knows every range the replay holds, so this cannot collide; if it ever did, the
    // simulated device's own placement decides rather than a corrupt answer.
    if (overlapsLive(live, address, request.size)) return std::nullopt;
    return address;
}

}  // namespace allocscope::alloc
