#pragma once
// llm-inference-varlen: see description() in LlmInferenceVarlenWorkload.cpp.
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class LlmInferenceVarlenWorkload final : public Workload {
public:
    std::string name() const override { return "llm-inference-varlen"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    bool usesSeed() const override { return true; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
