#pragma once
// PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync on a real GPU: every allocation is a
// cudaMallocAsync from the device's default memory pool (release threshold UINT64_MAX, so the
// pool never trims by itself), every free a cudaFreeAsync; statistics are what PyTorch's async
// backend reports (reference §8.5, §13): allocated_bytes.all and active_bytes.all = the pool's
// used memory (current / high), reserved_bytes.all = its reserved memory, everything else 0,
// max_split_size 0.
//
// All work goes to the legacy default stream: a Program's stream ids (from a generator or a
// recorded trace) are not real streams, and with one real stream every use is already ordered,
// so record_stream / complete_pending need no events here.
//
// The default pool is per device and shared by the whole process: the constructor trims it and
// resets its high-water marks so the statistics describe this backend's work only.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/Op.h"

namespace allocscope::alloc {

struct CudaAsyncRunResult {
    std::uint64_t ops = 0;
    std::uint64_t allocs = 0;
    std::uint64_t frees = 0;
    std::uint64_t ooms = 0;          // allocations refused (fraction limit or device memory)
    std::vector<std::uint64_t> oomOps;  // the op index of each refused allocation
    std::uint64_t peakReservedOp = 0;   // first op after which the pool's reserved memory peaked
    std::uint64_t unknownFrees = 0;  // frees of ids that hold no allocation (e.g. after an OOM)
};

class CudaAsyncBackend {
public:
    // Throws CudaError when the device cannot be used (ask CudaDevice::unavailableReason()).
    explicit CudaAsyncBackend(int device = 0);
    // Frees what is still allocated and waits for the device. Never throws.
    ~CudaAsyncBackend();
    CudaAsyncBackend(const CudaAsyncBackend&) = delete;
    CudaAsyncBackend& operator=(const CudaAsyncBackend&) = delete;

    // nullopt: out of memory (over the memory-fraction limit, or the pool could not grow).
    std::optional<std::uint64_t> malloc(std::uint64_t size);
    // false: `pointer` is not a live allocation of this backend.
    bool free(std::uint64_t pointer);
    void synchronize();
    // torch.cuda.empty_cache() under this backend: synchronize, then trim the pool to 0.
    void emptyCache();
    // Limit = fraction * total device memory (cudaMemGetInfo's total), checked against the sum
    // of live requested sizes, as PyTorch's async backend does.
    void setMemoryFraction(double fraction);
    void resetPeakStats();
    // Synchronizes first, so stream-ordered frees are reflected.
    DeviceStats stats();

    // Runs a whole program (op by op, in order). `touch`: cudaMemset each new allocation.
    CudaAsyncRunResult run(const Program& program, bool touch = false);

    std::uint64_t liveAllocations() const { return live_.size(); }

private:
    int device_ = 0;
    void* pool_ = nullptr;  // cudaMemPool_t
    std::uint64_t total_ = 0;
    std::uint64_t limit_ = UINT64_MAX;
    std::uint64_t usedBytes_ = 0;  // sum of live requested sizes (PyTorch's per-device counter)
    std::unordered_map<std::uint64_t, std::uint64_t> live_;  // pointer -> requested size
};

}  // namespace allocscope::alloc
