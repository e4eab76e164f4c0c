#include "allocator/replay/DriverVaHeap.h"

#include <algorithm>
#include <iterator>
#include <vector>

namespace allocscope::alloc {
namespace {
std::uint64_t alignUp(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
// The runtime's region between a fresh process's first new chunk and its lower runtime chunk.
constexpr std::uint64_t kRuntimeRegion = 12 * DriverVaHeap::kChunk;
constexpr std::uint64_t kRuntimeRange = 30 * DriverVaHeap::kMiB;  // the runtime's range at the top
}  // namespace

void DriverVaHeap::startFreshProcess(std::uint64_t top) {
    // Measured in every fresh process of the corpus: a first 2 MiB range lands at top + 30 MiB,
    // the first larger ones from top + 104 MiB (a 24 MiB gap), and the first new chunk ends
    // 384 MiB below top; the rest of that space is the runtime's. The lower chunk counts as the
    // more recent one (a 2 MiB range goes there before the upper gap).
    Chunk& upper = addChunk(top + 3 * kChunk, kChunk, false, true);
    upper.ranges[top + 3 * kChunk] = 8 * kMiB;
    Chunk& lower = addChunk(top, kChunk, false, true);
    lower.ranges[top] = 30 * kMiB;
    frontier_ = top - kRuntimeRegion;
    runtimeTop_ = top;
}

void DriverVaHeap::startBelow(std::uint64_t frontier) { frontier_ = frontier; }

DriverVaHeap::Chunk& DriverVaHeap::addChunk(std::uint64_t base, std::uint64_t size, bool reservation, bool permanent) {
    auto [it, fresh] = chunks_.try_emplace(base);
    Chunk& c = it->second;
    // A chunk already there (only when the replay's ranges contradict the rules) keeps its
    // ranges and becomes the most recent.
    if (!fresh) byOrder_.erase(c.order);
    c.size = std::max(c.size, size);
    c.order = nextOrder_++;
    c.permanent = c.permanent || permanent;
    c.reservation = reservation;
    byOrder_[c.order] = base;
    return c;
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> DriverVaHeap::fitInChunks(std::uint64_t size) const {
    for (auto it = byOrder_.rbegin(); it != byOrder_.rend(); ++it) {
        const std::uint64_t base = it->second;
        const auto found = chunks_.find(base);
        if (found == chunks_.end()) continue;
        const Chunk& chunk = found->second;
        std::optional<std::uint64_t> best;
        std::uint64_t bestGap = 0;
        std::uint64_t pos = base;
        auto consider = [&](std::uint64_t end) {
            if (end > pos && end - pos >= size && (!best || end - pos < bestGap)) {
                best = pos;
                bestGap = end - pos;
            }
        };
        for (const auto& [start, extent] : chunk.ranges) {
            consider(start);
            pos = std::max(pos, start + extent);
        }
        consider(base + chunk.size);
        if (best) return std::make_pair(base, *best);
    }
    return std::nullopt;
}

std::uint64_t DriverVaHeap::newChunk(std::uint64_t chunkSize) {
    // A released range takes the chunk only if it is strictly larger (a 128 MiB chunk never went
    // into a released 128 MiB range, a 96 MiB one did); the highest such range, at its top.
    for (auto it = holes_.rbegin(); it != holes_.rend(); ++it) {
        if (it->second > chunkSize) {
            it->second -= chunkSize;
            return it->first + it->second;
        }
    }
    frontier_ -= chunkSize;
    return frontier_;
}

std::uint64_t DriverVaHeap::allocate(std::uint64_t requestSize) {
    const std::uint64_t size = alignUp(requestSize, kPage);
    std::uint64_t chunkBase = 0;
    std::uint64_t address = 0;
    if (const auto fit = fitInChunks(size)) {
        chunkBase = fit->first;
        address = fit->second;
    } else {
        const std::uint64_t chunkSize = alignUp(size, kChunk);
        chunkBase = newChunk(chunkSize);
        addChunk(chunkBase, chunkSize, false, false);
        address = chunkBase;
    }
    chunks_[chunkBase].ranges[address] = size;
    ranges_[address] = chunkBase;
    return address;
}

std::uint64_t DriverVaHeap::reserve(std::uint64_t requestSize) {
    const std::uint64_t size = alignUp(requestSize, kPage);
    const std::uint64_t chunkSize = alignUp(size, kChunk);
    std::uint64_t pos = kReservationBase;
    for (auto it = chunks_.lower_bound(kReservationBase); it != chunks_.end(); ++it) {
        if (!it->second.reservation) continue;
        if (it->first >= pos && it->first - pos >= chunkSize) break;
        pos = std::max(pos, it->first + it->second.size);
    }
    addChunk(pos, chunkSize, true, false).ranges[pos] = size;
    ranges_[pos] = pos;
    return pos;
}

void DriverVaHeap::insert(std::uint64_t base, std::uint64_t requestSize, bool reservation) {
    if (ranges_.count(base)) release(base);
    const std::uint64_t size = alignUp(requestSize, kPage);
    auto it = chunks_.upper_bound(base);
    if (!reservation && it != chunks_.begin()) {
        // Inside a chunk's extent: it joins that chunk (which grows if the range runs past its end).
        auto holder = std::prev(it);
        Chunk& chunk = holder->second;
        if (base < holder->first + chunk.size) {
            chunk.size = std::max(chunk.size, base + size - holder->first);
            chunk.ranges[base] = size;
            ranges_[base] = holder->first;
            return;
        }
    }
    // A chunk of its own, cut short where the next chunk begins. A range that did not open a
    // chunk (its base is not on a chunk boundary) sits among ranges nobody recorded (the
    // runtime's): nothing around it is known to be free.
    std::uint64_t chunkSize = base % kChunk == 0 ? alignUp(size, kChunk) : size;
    if (it != chunks_.end() && it->first > base) chunkSize = std::min(chunkSize, std::max(size, it->first - base));
    carveHoles(base, chunkSize);
    addChunk(base, chunkSize, reservation, false).ranges[base] = size;
    ranges_[base] = base;
    if (!reservation && (frontier_ == 0 || base < frontier_)) frontier_ = base;
}

void DriverVaHeap::sync(const std::map<std::uint64_t, std::uint64_t>& live) {
    std::vector<std::uint64_t> gone;
    for (const auto& [base, chunk] : ranges_) {
        if (!live.count(base)) gone.push_back(base);
    }
    for (std::uint64_t base : gone) release(base);
    // Ranges placed without this heap (an exact replay's recorded answers) hold their place too.
    for (const auto& [base, size] : live) {
        if (!ranges_.count(base)) insert(base, size, false);
    }
}

void DriverVaHeap::free(std::uint64_t base) { release(base); }

void DriverVaHeap::allocateHidden(std::uint64_t requestSize) {
    // Placed as allocate() would, but not entered in ranges_: no caller holds it.
    const std::uint64_t address = allocate(requestSize);
    ranges_.erase(address);
}

void DriverVaHeap::addReleasedRange(std::uint64_t base, std::uint64_t size) {
    // Union with the released ranges it overlaps or touches.
    std::uint64_t end = base + size;
    for (auto it = holes_.begin(); it != holes_.end();) {
        if (it->first <= end && it->first + it->second >= base) {
            base = std::min(base, it->first);
            end = std::max(end, it->first + it->second);
            it = holes_.erase(it);
        } else {
            ++it;
        }
    }
    if (base == frontier_) {
        frontier_ = end;
    } else {
        holes_[base] = end - base;
    }
}

bool DriverVaHeap::inRuntimeRegion(std::uint64_t address) const {
    return runtimeTop_ != 0 && address >= runtimeTop_ - kRuntimeRegion && address < runtimeTop_ + kChunk;
}

bool DriverVaHeap::knows(std::uint64_t address) const {
    if (address < frontier_) return true;
    if (auto it = chunks_.upper_bound(address); it != chunks_.begin()) {
        --it;
        if (address < it->first + it->second.size) return true;
    }
    if (auto it = holes_.upper_bound(address); it != holes_.begin()) {
        --it;
        if (address < it->first + it->second) return true;
    }
    return false;
}

bool DriverVaHeap::releaseRuntimeRegion() {
    const auto found = chunks_.find(runtimeTop_);
    if (runtimeTop_ == 0 || found == chunks_.end()) return false;
    // The chunk keeps its place in the creation order: it is the runtime's first chunk, grown.
    Chunk chunk = std::move(found->second);
    chunks_.erase(found);
    const std::uint64_t base = runtimeTop_ - kRuntimeRegion;
    const std::uint64_t size = kRuntimeRegion + chunk.size;
    runtimeTop_ = 0;
    if (auto own = chunk.ranges.find(base + kRuntimeRegion); own != chunk.ranges.end() && own->second == kRuntimeRange) {
        chunk.ranges.erase(own);
    }
    byOrder_.erase(chunk.order);
    if (chunk.ranges.empty()) {
        addReleasedRange(base, size);
        return true;
    }
    chunk.size = size;
    chunk.permanent = false;
    byOrder_[chunk.order] = base;
    for (const auto& [start, extent] : chunk.ranges) {
        if (auto r = ranges_.find(start); r != ranges_.end()) r->second = base;
    }
    chunks_[base] = std::move(chunk);
    return true;
}

void DriverVaHeap::release(std::uint64_t base) {
    const auto range = ranges_.find(base);
    if (range == ranges_.end()) return;
    const std::uint64_t chunkBase = range->second;
    ranges_.erase(range);
    const auto found = chunks_.find(chunkBase);
    if (found == chunks_.end()) return;
    Chunk& chunk = found->second;
    chunk.ranges.erase(base);
    if (!chunk.ranges.empty() || chunk.permanent) return;
    const std::uint64_t size = chunk.size;
    const bool reservation = chunk.reservation;
    byOrder_.erase(chunk.order);
    chunks_.erase(chunkBase);
    if (!reservation) addHole(chunkBase, size);
}

void DriverVaHeap::addHole(std::uint64_t base, std::uint64_t size) {
    // Released neighbours merge; a range released at the bottom of the heap joins the free space below.
    if (auto next = holes_.find(base + size); next != holes_.end()) {
        size += next->second;
        holes_.erase(next);
    }
    if (auto it = holes_.lower_bound(base); it != holes_.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == base) {
            base = prev->first;
            size += prev->second;
            holes_.erase(prev);
        }
    }
    if (base == frontier_) {
        frontier_ = base + size;
    } else {
        holes_[base] = size;
    }
}

void DriverVaHeap::carveHoles(std::uint64_t base, std::uint64_t size) {
    const std::uint64_t end = base + size;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> keep;
    for (auto it = holes_.begin(); it != holes_.end();) {
        const std::uint64_t hb = it->first;
        const std::uint64_t he = it->first + it->second;
        if (hb >= end || he <= base) {
            ++it;
            continue;
        }
        if (hb < base) keep.emplace_back(hb, base - hb);
        if (he > end) keep.emplace_back(end, he - end);
        it = holes_.erase(it);
    }
    for (const auto& [b, s] : keep) holes_[b] = s;
}

}  // namespace allocscope::alloc
