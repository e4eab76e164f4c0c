#pragma once
// PyTorch's MempoolId_t: which memory pool a segment belongs to. (0, 0) is the default pool (the
// per-device small and large BlockPools); every other id names a *private pool*: a CUDA graph's
// pool (graph_pool_handle() / CUDAGraph: (id, 0)) or a torch.cuda.MemPool ((0, id)). Snapshots
// write it as `segment_pool_id`.
#include <cstdint>

namespace allocscope::alloc {

struct PoolId {
    std::uint64_t first = 0;
    std::uint64_t second = 0;

    bool isDefault() const { return first == 0 && second == 0; }
    // A torch.cuda.MemPool's id (user-created pools count in the second half); a graph's pool
    // counts in the first.
    bool isMemPool() const { return first == 0 && second != 0; }
    bool operator==(const PoolId&) const = default;
    bool operator<(const PoolId& other) const {
        return first != other.first ? first < other.first : second < other.second;
    }
};

}  // namespace allocscope::alloc
