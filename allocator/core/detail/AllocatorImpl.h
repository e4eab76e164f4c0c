#pragma once
// The state and the decision procedures of CachingAllocator, one function per PyTorch
// function (DeviceCachingAllocator in c10/cuda/CUDACachingAllocator.cpp). Internal: only the
// allocator's own sources and the InvariantChecker (which inspects the blocks) include it.
//
// Private pools (§12) are modelled: routing by stream while a capture or use_mem_pool is active,
// use counts, freeable pools released by empty_cache(), use_on_oom and no_split MemPools.
// Not modelled (documented choices):
// - A CUDA graph's own semantics (replay, the capture's events): a capture is the routing of its
//   stream's allocations to the graph's pool, and a capture underway skips the OOM retry's
//   release_cached_blocks and synchronisation, as in PyTorch.
// - use_mem_pool filters by thread in PyTorch; here a routing covers one stream or all streams.
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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/detail/AddressMap.h"
#include "allocator/core/detail/Block.h"
#include "allocator/core/detail/BlockPool.h"
#include "allocator/core/detail/NodeArena.h"
#include "allocator/core/detail/PrivatePool.h"

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
    void emptyCache(PoolId pool);
    void setMemoryFraction(double fraction);
    std::uint64_t roundSize(std::uint64_t size) const;
    std::uint64_t allocationSize(std::uint64_t size) const;
    std::vector<SegmentInfo> segments() const;
    std::string debugDump() const;

    // ---- private pools (PrivatePools.cpp) ----
    void createPool(PoolId id, PrivatePoolOptions options);
    void beginAllocateToPool(PoolId id, std::optional<StreamId> stream, bool capture);
    bool endAllocateToPool(PoolId id);
    bool releasePool(PoolId id);
    // get_pool(): the BlockPool a request of `size` on `stream` is routed to.
    detail::BlockPool& getPool(std::uint64_t size, StreamId stream);
    // try_mempool_fallback(): a use_on_oom MemPool's free block for a default-pool request.
    detail::Block* tryMempoolFallback(const detail::BlockPool& pool, StreamId stream, std::uint64_t size);
    // The free bytes cached in private pools (the OOM message's "allocated in private pools").
    std::uint64_t privatePoolFreeBytes() const;
    void releaseFreeablePools();
    bool captureUnderway() const;

    // ---- decision procedures ----
    detail::BlockPool& poolFor(std::uint64_t size) { return size <= kSmallSize ? small_ : large_; }
    // The small or large BlockPool of pool `id` (the default pools for (0, 0)); a private pool
    // that does not exist yet is created with no use.
    detail::BlockPool& blockPoolFor(PoolId id, bool small);
    bool gcEnabled() const { return allowedMax_.has_value() && config_.garbageCollectionThreshold > 0.0; }
    detail::Block* getFreeBlock(detail::BlockPool& pool, StreamId stream, std::uint64_t size);
    void reportTie(const detail::BlockPool& pool, const detail::FreeEntry& chosen, std::uint64_t size) const;
    bool shouldSplit(const detail::Block* block, std::uint64_t size) const;
    detail::Block* allocFoundBlock(detail::Block* block, std::uint64_t size, std::uint64_t origSize,
                                   std::uint32_t stackId);
    detail::Block* allocBlock(detail::BlockPool& pool, StreamId stream, std::uint64_t size,
                              std::uint64_t allocSize, bool isRetry, std::uint32_t stackId);
    void freeBlock(detail::Block* block);
    std::uint64_t tryMergeBlocks(detail::Block* dst, detail::Block* src, detail::BlockPool& pool,
                                 std::optional<detail::FreeSet::iterator>* reuse = nullptr);
    void releaseBlock(detail::Block* block);
    void releaseBlocks(detail::BlockPool& pool);
    void releaseCachedBlocks();
    bool releaseAvailableCachedBlocks(detail::BlockPool& pool, StreamId stream, std::uint64_t size);
    void garbageCollectCachedBlocks();
    void synchronizeAndFreeEvents();
    void completeAllPending(const detail::PrivatePool* only = nullptr);
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
              StreamId stream, std::uint64_t segment, std::uint32_t stackId, PoolKind pool, PoolId poolId = {}) {
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
        event.poolId = poolId;
        sink_->onEvent(event);
    }
    // The segment_pool_id of a BlockPool's segments: (0, 0) for the default pools.
    static PoolId poolIdOf(const detail::BlockPool& pool) { return pool.owner != nullptr ? pool.owner->id : PoolId{}; }
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
    // Private pools by id (ordered: release order is deterministic), and the active routings in
    // the order they began (c10's graph_pools and captures_underway).
    struct Routing {
        PoolId id;
        std::optional<StreamId> stream;  // nullopt: every stream
        bool capture = false;
    };
    std::map<PoolId, std::unique_ptr<detail::PrivatePool>> privatePools_;
    std::uint64_t freeableCount_ = 0;  // pools made freeable so far (PrivatePool::freeableSince)
    std::vector<Routing> routings_;
    DeviceStats stats_;
    std::uint64_t totalAllocatedMemory_ = 0;  // cudaMalloc'd + mapped bytes
    std::optional<std::uint64_t> allowedMax_;  // fraction cap in bytes
    OomInfo lastOom_;
    std::uint64_t seq_ = 0;
    std::uint64_t opIndex_ = 0;
    BestFitTieObserver tieObserver_;
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
