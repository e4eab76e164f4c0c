#pragma once
// cuda-graphs: see description() in CudaGraphsWorkload.cpp.
#include "allocator/core/PoolId.h"
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class CudaGraphsWorkload final : public Workload {
public:
    // The graph's private pool: PyTorch names the pool of the first graph captured without a
    // shared pool (1, 0) (MemPool::graph_pool_handle(false) counts from 1).
    static constexpr PoolId kGraphPool{1, 0};
    // torch.cuda.graph captures on a stream of its own (graph.default_capture_stream), neither the
    // default stream nor the side stream the warm-up ran on.
    static constexpr StreamId kCaptureStream = 0x7a03;

    std::string name() const override { return "cuda-graphs"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    bool usesSeed() const override { return false; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
