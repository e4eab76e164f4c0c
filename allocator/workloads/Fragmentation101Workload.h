#pragma once
// fragmentation-101: the classic picture of fragmentation, exactly as the shared frag101 trace
// recorded it (traces/pytorch-2.11-h100/tracegen.py, w_frag101): fifty small tensors, a hundred
// 10 MB tensors, every other one freed, a 200 MB request (which cannot use the ~477 MiB of
// freed memory because it is in 9.5 MiB pieces), the rest freed, empty_cache(), 200 MB again.
// With default parameters the alloc/free order equals the trace's, op for op.
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class Fragmentation101Workload final : public Workload {
public:
    std::string name() const override { return "fragmentation-101"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    bool usesSeed() const override { return false; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
