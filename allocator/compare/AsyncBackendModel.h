#pragma once
// A model of backend:cudaMallocAsync on the simulated device (reference §8.5, §10.5, §13).
//
// PyTorch's async backend hands every request to cudaMallocAsync on the device's default
// memory pool (release threshold UINT64_MAX: the pool never shrinks by itself) and frees with
// cudaFreeAsync; empty_cache() is cudaDeviceSynchronize + cudaMemPoolTrimTo(0). The driver's
// pool is opaque; this model is fitted to what PyTorch reported for the shared programs
// (traces/pytorch-2.11-h100/W__async.json):
//  - The pool is one growing virtual range. A request (rounded up to 512 B) takes the lowest
//    free range that fits (freed memory is reusable at once on its stream; a free with stream
//    uses is reusable once it completes); otherwise it goes at the end of the range (never
//    into a free range at the end: fitted, see place()). Free ranges merge.
//  - Physical memory backs the range in 32 MiB granules: reserved = backed granules. A granule
//    is backed when an allocation first touches it and stays backed (threshold UINT64_MAX)
//    until a trim: empty_cache(), a release threshold (releaseThreshold, applied at
//    synchronize / empty_cache), or the retry after a failed growth, which trims everything not
//    in use and tries once more.
//  - A memory fraction limits PyTorch's own count of used bytes (the sum of requested sizes):
//    used + size > fraction x total -> OOM with the async backend's message.
// Statistics as PyTorch reports them under this backend: allocated_bytes.all and
// active_bytes.all (current, peak) = used bytes; reserved_bytes.all (current, peak) = pool
// reserved bytes; every other key 0, max_split_size 0.
//
// Accuracy against PyTorch's numbers (tests/workloads/TestAsyncBackendModel.cpp): peak
// allocated is exact for frag101, train_gpt and kv_growth_limited; peak reserved is exact for
// frag101 (1152 MiB), +1.9 % for train_gpt (5184 vs 5088 MiB), and -39 % for kv_growth_limited
// (2176 vs 3552 MiB): the real pool keeps far more memory for ever-growing buffers than any
// address-ordered model we fitted (first/best fit, 2/32 MiB granules, with or without merging,
// per-allocation chunks). Treat async reserved numbers as a lower estimate.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/Op.h"

namespace allocscope::alloc {

struct AsyncRunResult {
    DeviceStats stats;
    std::uint64_t opsRun = 0;
    std::uint64_t allocFreeOps = 0;   // program allocs + frees (for the cost model)
    std::uint64_t peakReservedOp = 0;
    std::uint64_t grows = 0;          // granules backed (the pool's physical growth steps)
    std::uint64_t trims = 0;          // granules released
    struct Oom {
        std::uint64_t opIndex = 0;
        std::string message;
    };
    std::vector<Oom> ooms;
    std::optional<std::string> error;  // an invalid op (unknown id, ...): the run stopped there
};

class AsyncBackendModel {
public:
    static constexpr std::uint64_t kGranule = 32ull << 20;
    static constexpr std::uint64_t kAlignment = 512;

    AsyncBackendModel(std::uint64_t totalMemory, std::uint64_t otherMemory,
                      std::optional<double> memoryFraction = std::nullopt,
                      std::uint64_t releaseThreshold = ~0ull);
    // Applies one op; false if the op is invalid (then result.error says why).
    bool apply(const Op& op, std::uint64_t opIndex, AsyncRunResult& result);
    AsyncRunResult run(const Program& program);

    std::uint64_t reserved() const { return backed_.size() * kGranule; }
    std::uint64_t used() const { return used_; }

private:
    struct Tensor {
        std::uint64_t offset, size, requested;
    };
    std::optional<std::uint64_t> place(std::uint64_t size);
    void release(const Tensor& t);
    void unplace(std::uint64_t offset, std::uint64_t size);
    bool back(std::uint64_t offset, std::uint64_t size, bool dryRun) ;
    void trimTo(std::uint64_t bytes, AsyncRunResult& result);
    void record(AsyncRunResult& result, std::uint64_t opIndex);
    std::string oomMessage(std::uint64_t size) const;

    std::uint64_t total_, other_;
    std::optional<std::uint64_t> limit_;
    std::uint64_t threshold_;
    std::map<std::uint64_t, std::uint64_t> free_;       // offset -> size, inside [0, end_)
    std::uint64_t end_ = 0;
    std::map<std::uint64_t, std::uint32_t> backed_;      // granule index -> live tensors touching it
    std::unordered_map<std::uint64_t, Tensor> live_;     // tensor id -> placement
    std::unordered_map<std::uint64_t, Tensor> pending_;  // freed with stream uses, not yet complete
    std::unordered_map<std::uint64_t, bool> recorded_;   // ids with record_stream on another stream
    std::unordered_map<std::uint64_t, StreamId> streamOf_;
    std::unordered_set<std::uint64_t> failed_;           // ids whose alloc hit an OOM
    std::uint64_t used_ = 0;
    std::uint64_t peakUsed_ = 0, peakReserved_ = 0;
};

}  // namespace allocscope::alloc
