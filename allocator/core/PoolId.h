#pragma once
// PyTorch's MempoolId_t: which memory pool a segment belongs to. (0, 0) is the default pool (the
// per-device small and large BlockPools); every other id names a *private pool*: the pool a CUDA
// graph capture creates for itself ((id, 0)), or one made by torch.cuda.MemPool() or
// torch.cuda.graph_pool_handle() ((0, id): torch.compile's graph trees use the latter, so (0, id)
// alone does not say MemPool). Snapshots write it as `segment_pool_id`.
#include <cstdint>

namespace allocscope::alloc {

struct PoolId {
    std::uint64_t first = 0;
    std::uint64_t second = 0;

    bool isDefault() const { return first == 0 && second == 0; }
    bool operator==(const PoolId&) const = default;
    bool operator<(const PoolId& other) const {
        return first != other.first ? first < other.first : second < other.second;
    }
};

}  // namespace allocscope::alloc
