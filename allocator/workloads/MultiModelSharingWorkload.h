#pragma once
// multi-model-sharing: see description() in MultiModelSharingWorkload.cpp.
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class MultiModelSharingWorkload final : public Workload {
public:
    std::string name() const override { return "multi-model-sharing"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    bool usesSeed() const override { return true; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
