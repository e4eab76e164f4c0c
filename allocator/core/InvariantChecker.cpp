#include "allocator/core/InvariantChecker.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "allocator/core/HexAddress.h"
#include "allocator/core/detail/AllocatorImpl.h"
#include "allocator/device/SimulatedDevice.h"

namespace allocscope::alloc {

using detail::Block;
using detail::Segment;

namespace {

std::size_t poolIndex(PoolKind pool) { return pool == PoolKind::Small ? kSmallPool : kLargePool; }

void up(StatArray& array, std::size_t pool, std::int64_t amount) {
    array[kAggregate].increase(amount);
    array[pool].increase(amount);
}
void down(StatArray& array, std::size_t pool, std::int64_t amount) {
    array[kAggregate].decrease(amount);
    array[pool].decrease(amount);
}

// The `current` values that the block lists determine.
struct Recomputed {
    std::array<std::int64_t, 3> allocation{}, allocatedBytes{}, active{}, activeBytes{}, requested{}, segment{},
        reserved{}, inactiveSplit{}, inactiveSplitBytes{};
    std::int64_t oversizeAllocations = 0, oversizeSegments = 0;
};

void add(std::array<std::int64_t, 3>& array, std::size_t pool, std::int64_t amount) {
    array[kAggregate] += amount;
    array[pool] += amount;
}

// Walks every segment; returns the first structural violation (empty if none) and fills `out`.
std::string walk(const CachingAllocator::Impl& impl, std::uint64_t maxSplit, Recomputed& out) {
    std::size_t freeCount[3] = {0, 0, 0};
    std::size_t unmappedCount[3] = {0, 0, 0};
    std::size_t activeCount = 0;
    std::size_t pendingCount = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    for (std::size_t index = 0; index < impl.segments_.size(); ++index) {
        const Segment* segment = impl.segments_[index];
        // Messages are built only on failure: the checker runs after every operation.
        auto where = [segment] { return "segment " + hexAddress(segment->address); };
        if (segment->index != index) return where() + ": wrong index in the live-segment list";
        const std::size_t pool = segment->pool->statType;
        ranges.emplace_back(segment->address, segment->size);
        const Block* head = segment->head;
        if (head == nullptr || head->prev != nullptr) return where() + ": head block missing or has a prev";
        if (head->address != segment->address) return where() + ": head block does not start the segment";
        std::uint64_t total = 0;
        std::uint64_t mapped = 0;
        const Block* previous = nullptr;
        for (const Block* block = head; block != nullptr; block = block->next) {
            auto at = [&where, block] { return where() + " block " + hexAddress(block->address); };
            if (block->prev != previous) return at() + ": prev link broken";
            if (previous != nullptr && previous->address + previous->size != block->address) {
                return at() + ": gap or overlap after the previous block";
            }
            if (block->segment != segment || block->pool != segment->pool || block->stream != segment->stream) {
                return at() + ": segment, pool or stream disagrees with its segment";
            }
            if (block->size == 0 || block->size % kMinBlockSize != 0) return at() + ": size not a multiple of 512";
            if (!block->mapped && !segment->expandable) return at() + ": unmapped block in a cudaMalloc segment";
            if (!block->allocated && !block->streamUses.empty()) return at() + ": free block with stream uses";
            if (previous != nullptr && previous->isAvailable() && block->isAvailable() &&
                previous->mapped == block->mapped) {
                return at() + ": two adjacent free blocks were not merged";
            }
            const bool pending = !block->allocated && block->eventCount > 0;
            if (block->allocated && block->eventCount > 0) return at() + ": allocated block with events";
            if (block->allocated || pending) {
                if (impl.active_.find(block->address) != block) return at() + ": active block missing from the address map";
                ++activeCount;
                add(out.active, pool, 1);
                add(out.activeBytes, pool, static_cast<std::int64_t>(block->size));
                add(out.requested, pool, static_cast<std::int64_t>(block->requestedSize));
                if (block->allocated) {
                    add(out.allocation, pool, 1);
                    add(out.allocatedBytes, pool, static_cast<std::int64_t>(block->size));
                    if (block->size >= maxSplit) ++out.oversizeAllocations;
                } else {
                    ++pendingCount;
                    if (std::find(impl.pending_.begin(), impl.pending_.end(), block) == impl.pending_.end()) {
                        return at() + ": pending block missing from the pending list";
                    }
                }
            } else if (block->mapped) {
                // Membership is checked below, in one pass over the free sets.
                ++freeCount[pool];
                if (!segment->expandable && block->isSplit()) {
                    add(out.inactiveSplit, pool, 1);
                    add(out.inactiveSplitBytes, pool, static_cast<std::int64_t>(block->size));
                }
            } else {
                auto found = segment->pool->unmapped.find(const_cast<Block*>(block));
                if (found == segment->pool->unmapped.end() || *found != block) {
                    return at() + ": unmapped block not in the unmapped set";
                }
                if ((block->address - segment->address) % segment->pageSize != 0 ||
                    block->size % segment->pageSize != 0) {
                    return at() + ": unmapped range not page aligned";
                }
                ++unmappedCount[pool];
            }
            if (block->mapped) mapped += block->size;
            total += block->size;
            previous = block;
        }
        if (total != segment->size) return where() + ": blocks do not add up to the segment size";
        if (segment->expandable) {
            if (mapped != segment->mappedBytes) return where() + ": mapped bytes disagree with the mapped blocks";
            add(out.reserved, pool, static_cast<std::int64_t>(mapped));
        } else {
            add(out.segment, pool, 1);
            add(out.reserved, pool, static_cast<std::int64_t>(segment->size));
            if (segment->size >= maxSplit) ++out.oversizeSegments;
        }
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i) {
        if (ranges[i - 1].first + ranges[i - 1].second > ranges[i].first) {
            return "segments " + hexAddress(ranges[i - 1].first) + " and " + hexAddress(ranges[i].first) + " overlap";
        }
    }
    // Every free-set entry is a distinct free, mapped, idle block of a live segment of that pool
    // with its current key; with the counts equal, the free sets hold exactly the free blocks.
    // Every BlockPool: the default two and each private pool's two.
    std::vector<const detail::BlockPool*> pools{&impl.small_, &impl.large_};
    for (const auto& [id, privatePool] : impl.privatePools_) {
        pools.push_back(&privatePool->small);
        pools.push_back(&privatePool->large);
    }
    std::size_t freeEntries[3] = {0, 0, 0};
    std::size_t unmappedEntries[3] = {0, 0, 0};
    for (const detail::BlockPool* pool : pools) {
        freeEntries[pool->statType] += pool->blocks.size();
        unmappedEntries[pool->statType] += pool->unmapped.size();
        for (const detail::FreeEntry& entry : pool->blocks) {
            const Block* block = entry.block;
            const Segment* segment = block->segment;
            if (segment == nullptr || segment->index >= impl.segments_.size() ||
                impl.segments_[segment->index] != segment || block->pool != pool) {
                return "free set entry " + hexAddress(entry.address()) + " is not a block of a live segment of its pool";
            }
            if (!block->isAvailable() || !block->mapped) {
                return "free set entry " + hexAddress(entry.address()) + " is not a free, mapped, idle block";
            }
            if (entry.stream != block->stream || entry.size() != block->size || entry.address() != block->address ||
                entry.expandable != segment->expandable) {
                return "free set entry " + hexAddress(entry.address()) + " has a stale key";
            }
        }
    }
    if (freeEntries[kSmallPool] != freeCount[kSmallPool] || freeEntries[kLargePool] != freeCount[kLargePool]) {
        return "the free sets do not hold exactly the free blocks";
    }
    if (unmappedEntries[kSmallPool] != unmappedCount[kSmallPool] ||
        unmappedEntries[kLargePool] != unmappedCount[kLargePool]) {
        return "an unmapped set holds blocks that are not unmapped ranges of a live segment";
    }
    if (impl.active_.size() != activeCount) return "the address map holds blocks that are not active";
    if (impl.pending_.size() != pendingCount) return "the pending list holds blocks that are not pending";
    if (static_cast<std::int64_t>(impl.totalAllocatedMemory_) != out.reserved[kAggregate]) {
        return "total_allocated_memory disagrees with the segments";
    }
    return {};
}

const char* kCheckedPoolNames[3] = {"all", "small_pool", "large_pool"};

}  // namespace

InvariantChecker::InvariantChecker(std::uint64_t maxSplitSize) : maxSplitSize_(maxSplitSize) {
    shadow_.max_split_size = maxSplitSize == kUnlimited ? -1 : static_cast<std::int64_t>(maxSplitSize);
}

void InvariantChecker::onEvent(const Event& event) {
    if (sawEvent_ && event.seq != lastSeq_ + 1 && sequenceError_.empty()) {
        sequenceError_ = "event sequence jumps from " + std::to_string(lastSeq_) + " to " + std::to_string(event.seq);
    }
    sawEvent_ = true;
    lastSeq_ = event.seq;
    const std::size_t pool = poolIndex(event.pool);
    const auto size = static_cast<std::int64_t>(event.size);
    const auto rounded = static_cast<std::int64_t>(event.roundedSize);
    switch (event.action) {
        case EventAction::Alloc:
            up(shadow_.allocation, pool, 1);
            up(shadow_.allocated_bytes, pool, rounded);
            up(shadow_.active, pool, 1);
            up(shadow_.active_bytes, pool, rounded);
            up(shadow_.requested_bytes, pool, size);
            if (event.roundedSize >= maxSplitSize_) shadow_.oversize_allocations.increase(1);
            break;
        case EventAction::FreeRequested:
            down(shadow_.allocation, pool, 1);
            down(shadow_.allocated_bytes, pool, rounded);
            if (event.roundedSize >= maxSplitSize_) shadow_.oversize_allocations.decrease(1);
            break;
        case EventAction::FreeCompleted:
            down(shadow_.active, pool, 1);
            down(shadow_.active_bytes, pool, rounded);
            down(shadow_.requested_bytes, pool, size);
            break;
        case EventAction::SegmentAlloc:
            up(shadow_.segment, pool, 1);
            up(shadow_.reserved_bytes, pool, size);
            if (event.size >= maxSplitSize_) shadow_.oversize_segments.increase(1);
            ++shadow_.num_device_alloc;
            break;
        case EventAction::SegmentFree:
            down(shadow_.segment, pool, 1);
            down(shadow_.reserved_bytes, pool, size);
            if (event.size >= maxSplitSize_) shadow_.oversize_segments.decrease(1);
            ++shadow_.num_device_free;
            break;
        case EventAction::SegmentMap:
            up(shadow_.reserved_bytes, pool, size);
            ++shadow_.num_device_alloc;
            break;
        case EventAction::SegmentUnmap:
            down(shadow_.reserved_bytes, pool, size);
            ++shadow_.num_device_free;
            break;
        case EventAction::Oom:
            ++shadow_.num_ooms;
            break;
        case EventAction::Snapshot:
            break;
    }
}

void InvariantChecker::noteResetPeak() { shadow_.resetPeak(); }

void InvariantChecker::noteResetAccumulated(const CachingAllocator& allocator) {
    shadow_.resetAccumulated();
    Recomputed recomputed;
    walk(allocator.impl(), maxSplitSize_, recomputed);
    for (std::size_t p = 0; p < 3; ++p) {
        inactiveSplitBase_[p].current = recomputed.inactiveSplit[p];
        inactiveSplitBytesBase_[p].current = recomputed.inactiveSplitBytes[p];
    }
}

std::string InvariantChecker::check(const CachingAllocator& allocator) const {
    if (!sequenceError_.empty()) return sequenceError_;
    const CachingAllocator::Impl& impl = allocator.impl();
    Recomputed r;
    if (std::string error = walk(impl, maxSplitSize_, r); !error.empty()) return error;
    if (const auto* device = dynamic_cast<const SimulatedDevice*>(&allocator.device())) {
        if (device->usedBytes() != static_cast<std::uint64_t>(r.reserved[kAggregate])) {
            return "the device's used bytes (" + std::to_string(device->usedBytes()) +
                   ") disagree with the reserved bytes (" + std::to_string(r.reserved[kAggregate]) + ")";
        }
    }
    const DeviceStats& stats = allocator.stats();
    struct Exact {
        const char* name;
        const StatArray& actual;
        const StatArray& shadow;
        const std::array<std::int64_t, 3>& current;
    };
    const Exact exact[] = {
        {"allocation", stats.allocation, shadow_.allocation, r.allocation},
        {"allocated_bytes", stats.allocated_bytes, shadow_.allocated_bytes, r.allocatedBytes},
        {"active", stats.active, shadow_.active, r.active},
        {"active_bytes", stats.active_bytes, shadow_.active_bytes, r.activeBytes},
        {"requested_bytes", stats.requested_bytes, shadow_.requested_bytes, r.requested},
        {"segment", stats.segment, shadow_.segment, r.segment},
        {"reserved_bytes", stats.reserved_bytes, shadow_.reserved_bytes, r.reserved},
    };
    for (const Exact& e : exact) {
        for (std::size_t p = 0; p < 3; ++p) {
            const std::string key = std::string(e.name) + "." + kCheckedPoolNames[p];
            if (e.shadow[p].current != e.current[p]) {
                return key + ": the events say current " + std::to_string(e.shadow[p].current) +
                       ", the blocks say " + std::to_string(e.current[p]);
            }
            if (!(e.actual[p] == e.shadow[p])) {
                return key + ": allocator {" + std::to_string(e.actual[p].current) + "," +
                       std::to_string(e.actual[p].peak) + "," + std::to_string(e.actual[p].allocated) + "," +
                       std::to_string(e.actual[p].freed) + "} != recomputed {" + std::to_string(e.shadow[p].current) +
                       "," + std::to_string(e.shadow[p].peak) + "," + std::to_string(e.shadow[p].allocated) + "," +
                       std::to_string(e.shadow[p].freed) + "}";
            }
        }
    }
    struct Split {
        const char* name;
        const StatArray& actual;
        const StatArray& base;
        const std::array<std::int64_t, 3>& current;
    };
    const Split splits[] = {
        {"inactive_split", stats.inactive_split, inactiveSplitBase_, r.inactiveSplit},
        {"inactive_split_bytes", stats.inactive_split_bytes, inactiveSplitBytesBase_, r.inactiveSplitBytes},
    };
    for (const Split& s : splits) {
        for (std::size_t p = 0; p < 3; ++p) {
            const std::string key = std::string(s.name) + "." + kCheckedPoolNames[p];
            const Stat& a = s.actual[p];
            if (a.current != s.current[p]) {
                return key + ".current " + std::to_string(a.current) + " != recomputed " + std::to_string(s.current[p]);
            }
            if (a.peak < a.current) return key + ".peak below current";
            if (a.allocated - a.freed != a.current - s.base[p].current) return key + ": allocated - freed != current";
        }
    }
    if (!(stats.oversize_allocations == shadow_.oversize_allocations) ||
        stats.oversize_allocations.current != r.oversizeAllocations) {
        return "oversize_allocations disagrees with the events or the blocks";
    }
    if (!(stats.oversize_segments == shadow_.oversize_segments) ||
        stats.oversize_segments.current != r.oversizeSegments) {
        return "oversize_segments disagrees with the events or the segments";
    }
    if (stats.num_device_alloc != shadow_.num_device_alloc) return "num_device_alloc disagrees with the events";
    if (stats.num_device_free != shadow_.num_device_free) return "num_device_free disagrees with the events";
    if (stats.num_ooms != shadow_.num_ooms) return "num_ooms disagrees with the events";
    if (stats.num_alloc_retries < stats.num_ooms) return "fewer retries than OOMs (every OOM follows a retry)";
    if (stats.max_split_size != shadow_.max_split_size) return "max_split_size stat is wrong";
    return {};
}

}  // namespace allocscope::alloc
