#include "storage/session/AllocationRanking.h"

#include <algorithm>

namespace allocscope::storage {
namespace {

// "Larger" ranks first; among equal sizes the earlier allocation ranks first.
bool ranksBefore(const AllocationBand& a, const AllocationBand& b) {
    if (a.size != b.size) return a.size > b.size;
    return a.allocSeq < b.allocSeq;
}

}  // namespace

void AllocationRanking::observe(const alloc::Event& e) {
    switch (e.action) {
        case alloc::EventAction::Alloc: {
            // Once kept_ bands are held, one that ranks after the last of them can never enter: the
            // last kept only ever gets larger. Most allocations of a long run stop here, so the
            // ranking costs the recording little.
            if (heap_.size() == kept_ && (kept_ == 0 || e.roundedSize < heap_.front().size)) break;
            AllocationBand band;
            band.allocSeq = e.seq;
            band.address = e.address;
            band.size = e.roundedSize;
            band.requested = e.size;
            band.stream = e.stream;
            band.stackId = e.stackId;
            const auto pool = segmentPools_.find(e.segment);
            if (pool != segmentPools_.end()) band.pool = pool->second;
            live_[e.address] = band;
            break;
        }
        case alloc::EventAction::FreeRequested: {
            const auto it = live_.find(e.address);
            if (it == live_.end()) break;
            it->second.freeSeq = e.seq;
            offer(it->second);
            live_.erase(it);
            break;
        }
        case alloc::EventAction::SegmentAlloc:
        case alloc::EventAction::SegmentMap:
            if (!e.poolId.isDefault()) segmentPools_[e.segment] = e.poolId;
            break;
        case alloc::EventAction::SegmentFree:
            segmentPools_.erase(e.segment);
            break;
        default: break;
    }
}

void AllocationRanking::offer(const AllocationBand& band) {
    // heap_ keeps the kept_ best; its front is the one that would go first.
    if (heap_.size() < kept_) {
        heap_.push_back(band);
        std::push_heap(heap_.begin(), heap_.end(), ranksBefore);
        return;
    }
    if (kept_ == 0 || !ranksBefore(band, heap_.front())) return;
    std::pop_heap(heap_.begin(), heap_.end(), ranksBefore);
    heap_.back() = band;
    std::push_heap(heap_.begin(), heap_.end(), ranksBefore);
}

std::vector<AllocationBand> AllocationRanking::finish() {
    for (const auto& [address, band] : live_) offer(band);
    live_.clear();
    std::vector<AllocationBand> out = std::move(heap_);
    heap_.clear();
    std::sort(out.begin(), out.end(), ranksBefore);
    return out;
}

}  // namespace allocscope::storage
