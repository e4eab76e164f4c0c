#pragma once
// The state and the decision procedures of CachingAllocator, one function per PyTorch
// function (DeviceCachingAllocator in c10/cuda/CUDACachingAllocator.cpp). Internal: only the
// allocator's own sources and the InvariantChecker (which inspects the blocks) include it.
//
// Not modelled (documented choices):
// - CUDA graphs, private pools and MemPools (§12): every request goes to the default small/large
//   pools; "allocated in private pools" in the OOM message is always 0; release_cached_blocks
//   always synchronizes (no capture is ever underway).
// - Free-memory callbacks (cuda_ipc_collect) never free anything, so the second search of §4
//   step 3 never happens (it would tick the GC clock once more).
// - Event completion: a pending free completes when the program says so (completePendingFree),
//   at synchronize() (immediately, not at the next malloc's process_events), or in
//   synchronize_and_free_events (empty_cache / the OOM retry), in free() order.
// - backend:cudaMallocAsync behaves like the native allocator here; another model covers it.
// - The OOM message names "GPU 0".
//
// The implementation is split by responsibility across CachingAllocator.cpp (public API, malloc,
// free, search, split, merge), AllocatorRelease.cpp (GC, oversize release, empty_cache, OOM) and
// ExpandableSegments.cpp (map/unmap), because one file would exceed the size rule.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/detail/AddressMap.h"
#include "allocator/core/detail/Block.h"
#include "allocator/core/detail/BlockPool.h"
#include "allocator/core/detail/NodeArena.h"

namespace allocscope::alloc {

inline constexpr std::uint64_t kOneExaByte = 1152921504606846976ull;

class CachingAllocator::Impl {
public:
    Impl(const AllocatorConfig& config, DeviceMemory& device, EventSink* sink);
    ~Impl();

    // ---- public API (see CachingAllocator.h) ----
    std::optional<std::uint64_t> malloc(std::uint64_t size, StreamId stream, std::uint32_t stackId);
    bool free(std::uint64_t address);
    bool recordStream(std::uint64_t address, StreamId stream);
    bool completePendingFree(std::uint64_t address);
    void synchronize();
    void emptyCache();
    void setMemoryFraction(double fraction);
    std::uint64_t roundSize(std::uint64_t size) const;
    std::uint64_t allocationSize(std::uint64_t size) const;
    std::vector<SegmentInfo> segments() const;
    std::string debugDump() const;

    // ---- decision procedures ----
    detail::BlockPool& poolFor(std::uint64_t size) { return size <= kSmallSize ? small_ : large_; }
    bool gcEnabled() const { return allowedMax_.has_value() && config_.garbageCollectionThreshold > 0.0; }
    detail::Block* getFreeBlock(detail::BlockPool& pool, StreamId stream, std::uint64_t size);
    bool shouldSplit(const detail::Block* block, std::uint64_t size) const;
    detail::Block* allocFoundBlock(detail::Block* block, std::uint64_t size, std::uint64_t origSize,
                                   std::uint32_t stackId);
    detail::Block* allocBlock(detail::BlockPool& pool, StreamId stream, std::uint64_t size,
                              std::uint64_t allocSize, bool isRetry, std::uint32_t stackId);
    void freeBlock(detail::Block* block);
    std::uint64_t tryMergeBlocks(detail::Block* dst, detail::Block* src, detail::BlockPool& pool);
    void releaseBlock(detail::Block* block);
    void releaseBlocks(detail::BlockPool& pool);
    void releaseCachedBlocks();
    bool releaseAvailableCachedBlocks(detail::BlockPool& pool, StreamId stream, std::uint64_t size);
    void garbageCollectCachedBlocks();
    void synchronizeAndFreeEvents();
    void completeAllPending();
    void reportOom(std::uint64_t origSize, std::uint64_t size, std::uint64_t allocSize, StreamId stream);

    // expandable segments (ExpandableSegments.cpp)
    detail::Block* tryAllocateExpandableBlock(detail::BlockPool& pool, StreamId stream, std::uint64_t size,
                                              std::uint32_t stackId);
    detail::Block* findExpandableBlock(detail::BlockPool& pool, StreamId stream, std::uint64_t size,
                                       std::uint32_t stackId);
    bool mapBlock(detail::Block* toMap, std::uint64_t size);
    void unmapBlock(detail::Block* block);
    void releaseExpandableSegment(detail::Block* block);

    // ---- helpers ----
    detail::Block* newBlock() { return blockObjects_.acquire(); }
    void deleteBlock(detail::Block* block) { blockObjects_.release(block); }
    detail::Segment* newSegment();
    void deleteSegment(detail::Segment* segment);
    void emit(EventAction action, std::uint64_t address, std::uint64_t size, std::uint64_t roundedSize,
              StreamId stream, std::uint64_t segment, std::uint32_t stackId, PoolKind pool) {
        if (sink_ == nullptr) {
            ++seq_;
            return;
        }
        Event event;
        event.seq = seq_++;
        event.opIndex = opIndex_;
        event.address = address;
        event.size = size;
        event.roundedSize = roundedSize;
        event.stream = stream;
        event.segment = segment;
        event.stackId = stackId;
        event.action = action;
        event.cause = cause_;
        event.pool = pool;
        sink_->onEvent(event);
    }
    // Stat updates to "all" and the pool's own bucket.
    void increase(StatArray& array, std::size_t poolType, std::int64_t amount) {
        array[kAggregate].increase(amount);
        array[poolType].increase(amount);
    }
    void decrease(StatArray& array, std::size_t poolType, std::int64_t amount) {
        array[kAggregate].decrease(amount);
        array[poolType].decrease(amount);
    }

    // ---- state ----
    AllocatorConfig config_;
    DeviceMemory& device_;
    EventSink* sink_;
    detail::NodeArena arena_;  // must outlive the pools' sets (declared first)
    detail::ObjectPool<detail::Block> blockObjects_;
    detail::ObjectPool<detail::Segment> segmentObjects_;
    detail::BlockPool large_;
    detail::BlockPool small_;
    detail::AddressMap active_;               // allocated and pending-free blocks
    std::vector<detail::Segment*> segments_;  // live segments and reservations (unordered)
    std::vector<detail::Block*> pending_;     // pending frees, in free() order
    DeviceStats stats_;
    std::uint64_t totalAllocatedMemory_ = 0;  // cudaMalloc'd + mapped bytes
    std::optional<std::uint64_t> allowedMax_;  // fraction cap in bytes
    OomInfo lastOom_;
    std::uint64_t seq_ = 0;
    std::uint64_t opIndex_ = 0;
    EventCause cause_ = EventCause::Program;
};

// Sets the event cause for a scope and restores the previous one.
class CauseScope {
public:
    CauseScope(CachingAllocator::Impl& impl, EventCause cause) : impl_(impl), saved_(impl.cause_) {
        impl.cause_ = cause;
    }
    ~CauseScope() { impl_.cause_ = saved_; }
    CauseScope(const CauseScope&) = delete;
    CauseScope& operator=(const CauseScope&) = delete;

private:
    CachingAllocator::Impl& impl_;
    EventCause saved_;
};

}  // namespace allocscope::alloc
