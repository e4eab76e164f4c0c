#include "allocator/replay/HiddenRangeCalibration.h"

#include <algorithm>
#include <cstdint>

#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {
namespace {
std::uint64_t chunkOf(std::uint64_t size) {
    return (size + DriverVaHeap::kChunk - 1) / DriverVaHeap::kChunk * DriverVaHeap::kChunk;
}

// Where the rules would put a new range now, without placing it.
std::uint64_t peek(const DriverVaHeap& heap, std::uint64_t size) {
    DriverVaHeap trial = heap;
    return trial.allocate(size);
}

// Sizes a hidden range is tried at, smallest first (the least hidden memory that explains the
// recording): 2 to 30 MiB in whole pages, then whole chunks up to 2 GiB.
std::vector<std::uint64_t> hiddenSizes() {
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t pages = 1; pages < DriverVaHeap::kChunk / DriverVaHeap::kPage; ++pages) {
        sizes.push_back(pages * DriverVaHeap::kPage);
    }
    for (std::uint64_t chunks = 1; chunks <= 64; ++chunks) sizes.push_back(chunks * DriverVaHeap::kChunk);
    return sizes;
}
}  // namespace

std::optional<HiddenRangeCalibration> HiddenRangeCalibration::fromRecording(const RecordedTrace& recording) {
    return fromSegmentEvents(TraceSteps::segmentEvents(recording));
}

std::optional<HiddenRangeCalibration> HiddenRangeCalibration::fromSegmentEvents(const std::vector<StepSegmentEvent>& events) {
    HiddenRangeCalibration calibration;
    for (const StepSegmentEvent& e : events) {
        if (e.action == EventAction::SegmentMap || e.action == EventAction::SegmentUnmap) return std::nullopt;
        calibration.calls_.push_back({e.step, e.action == EventAction::SegmentAlloc, e.address, e.size});
    }
    if (calibration.calls_.empty() || !calibration.calls_.front().alloc ||
        calibration.calls_.size() > kMaxSegmentEvents) {
        return std::nullopt;
    }
    // The first segment opened the fresh process's first new chunk, which ends 384 MiB below
    // the heap's top (DriverVaHeap::startFreshProcess).
    const SegmentCall& first = calibration.calls_.front();
    // Addresses no driver hands out: the heap's top and its runtime chunks would pass 2^64.
    if (first.size > UINT64_MAX / 2 || first.base > UINT64_MAX - chunkOf(first.size) - 16 * DriverVaHeap::kChunk) {
        return std::nullopt;
    }
    calibration.top_ = first.base + chunkOf(first.size) + 12 * DriverVaHeap::kChunk;
    if (!calibration.infer()) return std::nullopt;
    calibration.moveEarlier();
    return calibration;
}

void HiddenRangeCalibration::apply(DriverVaHeap& heap, const Change& change) {
    switch (change.kind) {
        case Change::Kind::Hidden: heap.allocateHidden(change.size); break;
        case Change::Kind::Released: heap.addReleasedRange(change.base, change.size); break;
        case Change::Kind::RuntimeReleased: heap.releaseRuntimeRegion(); break;
    }
}

void HiddenRangeCalibration::applyDue(DriverVaHeap& heap, std::size_t step, std::size_t& next) const {
    for (; next < changes_.size() && changes_[next].step <= step; ++next) apply(heap, changes_[next]);
}

std::optional<std::vector<HiddenRangeCalibration::Change>> HiddenRangeCalibration::explain(const DriverVaHeap& heap,
                                                                                            const SegmentCall& call) const {
    using Kind = Change::Kind;
    std::vector<std::vector<Change>> candidates;
    const std::vector<std::uint64_t> sizes = hiddenSizes();
    if (heap.inRuntimeRegion(call.base)) {
        candidates.push_back({{Kind::RuntimeReleased, call.step, 0, 0}});
        for (std::uint64_t size : sizes) {
            candidates.push_back({{Kind::RuntimeReleased, call.step, 0, 0}, {Kind::Hidden, call.step, 0, size}});
        }
    }
    for (std::uint64_t size : sizes) candidates.push_back({{Kind::Hidden, call.step, 0, size}});
    if (!heap.knows(call.base) && call.base >= DriverVaHeap::kPage) {
        // The smallest released range whose top takes the segment's chunk: one page larger than
        // the chunk, as a released range must be strictly larger to be used.
        const std::uint64_t chunk = chunkOf(call.size);
        candidates.push_back({{Kind::Released, call.step, call.base - DriverVaHeap::kPage, chunk + DriverVaHeap::kPage}});
    }
    for (const std::vector<Change>& candidate : candidates) {
        DriverVaHeap trial = heap;
        for (const Change& c : candidate) apply(trial, c);
        if (trial.allocate(call.size) == call.base) return candidate;
    }
    return std::nullopt;
}

bool HiddenRangeCalibration::infer() {
    const auto allocs = static_cast<std::size_t>(std::count_if(calls_.begin(), calls_.end(), [](const SegmentCall& c) { return c.alloc; }));
    const std::size_t maxChanges = std::max<std::size_t>(8, allocs / kMaxChangeShare);
    const std::size_t maxUnexplained = std::max<std::size_t>(4, allocs / kMaxUnexplainedShare);
    DriverVaHeap heap;
    heap.startFreshProcess(top_);
    for (const SegmentCall& call : calls_) {
        if (!call.alloc) {
            heap.free(call.base);
            continue;
        }
        ++placements_;
        if (peek(heap, call.size) != call.base) {
            const std::optional<std::vector<Change>> found = explain(heap, call);
            if (!found) {
                // Unexplained: the recorded range holds its place, as in an uncalibrated replay.
                if (placements_ - reproduced_ > maxUnexplained) return false;
                heap.insert(call.base, call.size, false);
                continue;
            }
            for (const Change& c : *found) apply(heap, c);
            changes_.insert(changes_.end(), found->begin(), found->end());
            if (changes_.size() > maxChanges) return false;
        }
        heap.allocate(call.size);
        ++reproduced_;
    }
    return true;
}

std::size_t HiddenRangeCalibration::misses(const std::vector<Change>& changes) const {
    DriverVaHeap heap;
    heap.startFreshProcess(top_);
    std::size_t next = 0;
    std::size_t missed = 0;
    for (const SegmentCall& call : calls_) {
        for (; next < changes.size() && changes[next].step <= call.step; ++next) apply(heap, changes[next]);
        if (!call.alloc) {
            heap.free(call.base);
            continue;
        }
        const std::uint64_t placed = heap.allocate(call.size);
        if (placed != call.base) {
            ++missed;
            heap.free(placed);
            heap.insert(call.base, call.size, false);
        }
    }
    return missed;
}

void HiddenRangeCalibration::moveEarlier() {
    // Changes are applied at the start of their step, which can differ from where infer() met
    // them (between two calls of one step): the count to keep is that of the changes as dated.
    const std::size_t baseline = misses(changes_);
    reproduced_ = placements_ - baseline;
    for (std::size_t i = 0; i < changes_.size(); ++i) {
        const std::size_t floor = i == 0 ? 0 : changes_[i - 1].step;
        // Candidate dates: just after each earlier recorded call's step, latest first.
        for (auto call = calls_.rbegin(); call != calls_.rend(); ++call) {
            const std::size_t date = call->step + 1;
            if (date >= changes_[i].step) continue;
            if (date < floor) break;
            std::vector<Change> trial = changes_;
            trial[i].step = date;
            if (misses(trial) > baseline) break;
            changes_[i].step = date;
        }
    }
}

}  // namespace allocscope::alloc
