#pragma once
// The allocations of a run ranked by size, for the Allocations view (PyTorch's "active memory
// timeline": each allocation a band over time, stacked in allocation order). A band lives from
// its alloc event to its free_requested event (when allocated_bytes drops), or to the run's end.
// A run has millions of allocations but the view draws only the largest N one by one (the rest
// merge into one band whose height is allocated bytes minus the drawn ones), so only the largest
// kKept are kept: fed every event once, in order, it holds the live blocks and a bounded heap.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/core/PoolId.h"

namespace allocscope::storage {

struct AllocationBand {
    std::uint64_t allocSeq = 0;
    std::optional<std::uint64_t> freeSeq;  // the free_requested event; nullopt: live at the run's end
    std::uint64_t address = 0;
    std::uint64_t size = 0;       // block bytes (what allocated_bytes counts)
    std::uint64_t requested = 0;
    std::uint64_t stream = 0;
    std::uint32_t stackId = 0;
    alloc::PoolId pool;           // the segment's segment_pool_id
    bool operator==(const AllocationBand&) const = default;
};

class AllocationRanking {
public:
    static constexpr std::size_t kKept = 10000;  // the view's largest "Detail" setting

    explicit AllocationRanking(std::size_t kept = kKept) : kept_(kept) {}
    void observe(const alloc::Event& e);
    // The kept bands, largest first (ties: allocated earlier first). Call once, at the end.
    std::vector<AllocationBand> finish();

private:
    void offer(const AllocationBand& band);

    std::size_t kept_;
    std::unordered_map<std::uint64_t, AllocationBand> live_;  // by address
    std::map<std::uint64_t, alloc::PoolId> segmentPools_;  // private-pool segments only
    std::vector<AllocationBand> heap_;                  // min-heap by (size, -allocSeq)
};

}  // namespace allocscope::storage
