#pragma once
// model-load: see description() in ModelLoadWorkload.cpp.
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class ModelLoadWorkload final : public Workload {
public:
    std::string name() const override { return "model-load"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    bool usesSeed() const override { return false; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
