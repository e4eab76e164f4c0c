#pragma once
// oom-with-free-memory: "CUDA out of memory. Tried to allocate 256.00 MiB ... 7.03 GiB is reserved
// by PyTorch but unallocated". The GPU is filled with segments that each keep two live tensors
// around a freed hole; the holes add up to gigabytes, but none is 256 MiB and none can be returned
// to the driver, because every segment still holds live tensors. expandable_segments:True
// unmaps the holes' pages on the OOM retry and the request succeeds.
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class OomWithFreeMemoryWorkload final : public Workload {
public:
    std::string name() const override { return "oom-with-free-memory"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    std::string defaultGpu() const override { return "24gb"; }
    bool usesSeed() const override { return false; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
