// CachingAllocator::Impl: what PyTorch's snapshot() reports (segments sorted by address, one per
// contiguous mapped range of an expandable segment), and a plain-text dump for debugging.
#include <algorithm>
#include <cstdio>

#include "allocator/core/detail/AllocatorImpl.h"

namespace allocscope::alloc {

using detail::Block;
using detail::Segment;

namespace {

BlockInfo blockInfoOf(const Block* block) {
    BlockInfo info;
    info.address = block->address;
    info.size = block->size;
    info.requestedSize = block->requestedSize;
    info.stackId = block->allocated || block->eventCount > 0 ? block->stackId : 0;
    if (block->allocated) {
        info.state = BlockState::ActiveAllocated;
    } else if (block->eventCount > 0 || !block->streamUses.empty()) {
        info.state = BlockState::ActivePendingFree;
    } else {
        info.state = BlockState::Inactive;
    }
    return info;
}

SegmentInfo startSegment(const Segment* segment, std::uint64_t address) {
    SegmentInfo info;
    info.address = address;
    info.stream = segment->stream;
    info.pool = segment->pool->kind;
    if (segment->pool->owner != nullptr) info.poolId = segment->pool->owner->id;
    info.isExpandable = segment->expandable;
    info.stackId = segment->stackId;
    return info;
}

void addBlock(SegmentInfo& info, const Block* block) {
    BlockInfo blockInfo = blockInfoOf(block);
    info.totalSize += blockInfo.size;
    if (blockInfo.state == BlockState::ActiveAllocated) info.allocatedSize += blockInfo.size;
    if (blockInfo.state != BlockState::Inactive) {
        info.activeSize += blockInfo.size;
        info.requestedSize += blockInfo.requestedSize;
    }
    info.blocks.push_back(blockInfo);
}

}  // namespace

std::vector<SegmentInfo> CachingAllocator::Impl::segments() const {
    std::vector<SegmentInfo> result;
    for (const Segment* segment : segments_) {
        if (!segment->expandable) {
            SegmentInfo info = startSegment(segment, segment->address);
            for (const Block* block = segment->head; block != nullptr; block = block->next) addBlock(info, block);
            result.push_back(std::move(info));
            continue;
        }
        // One SegmentInfo per contiguous mapped range.
        bool open = false;
        for (const Block* block = segment->head; block != nullptr; block = block->next) {
            if (!block->mapped) {
                open = false;
                continue;
            }
            if (!open) {
                result.push_back(startSegment(segment, block->address));
                open = true;
            }
            addBlock(result.back(), block);
        }
    }
    std::sort(result.begin(), result.end(),
              [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
    return result;
}

std::string CachingAllocator::Impl::debugDump() const {
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "reserved=%llu cap=%s pending=%zu active_map=%zu\n",
                  static_cast<unsigned long long>(totalAllocatedMemory_),
                  allowedMax_ ? std::to_string(*allowedMax_).c_str() : "none", pending_.size(), active_.size());
    out += line;
    std::vector<const Segment*> sorted(segments_.begin(), segments_.end());
    std::sort(sorted.begin(), sorted.end(), [](const Segment* a, const Segment* b) { return a->address < b->address; });
    for (const Segment* segment : sorted) {
        std::snprintf(line, sizeof line, "segment 0x%llx size=%llu stream=%llu pool=%s%s mapped=%llu\n",
                      static_cast<unsigned long long>(segment->address),
                      static_cast<unsigned long long>(segment->size),
                      static_cast<unsigned long long>(segment->stream), segment->pool->isSmall ? "small" : "large",
                      segment->expandable ? " expandable" : "",
                      static_cast<unsigned long long>(segment->mappedBytes));
        out += line;
        for (const Block* block = segment->head; block != nullptr; block = block->next) {
            const char* state = block->allocated ? "allocated"
                                : block->eventCount > 0 ? "pending"
                                : block->mapped ? "free"
                                                : "unmapped";
            std::snprintf(line, sizeof line, "  0x%llx size=%llu req=%llu %s gc_base=%llu\n",
                          static_cast<unsigned long long>(block->address),
                          static_cast<unsigned long long>(block->size),
                          static_cast<unsigned long long>(block->requestedSize), state,
                          static_cast<unsigned long long>(block->gcCountBase));
            out += line;
        }
    }
    std::snprintf(line, sizeof line, "free set: large=%zu small=%zu; unmapped: large=%zu small=%zu\n",
                  large_.blocks.size(), small_.blocks.size(), large_.unmapped.size(), small_.unmapped.size());
    out += line;
    return out;
}

}  // namespace allocscope::alloc
