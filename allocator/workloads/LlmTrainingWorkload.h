#pragma once
// llm-training: a GPT-like model trained for a few steps (parameters, gradients, AdamW states,
// per-block activations, the vocabulary-sized logits). The request sequence follows PyTorch
// eager op by op (GptTrainingProgram.h); at the default shape it is the shared train_gpt trace.
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class LlmTrainingWorkload final : public Workload {
public:
    std::string name() const override { return "llm-training"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    bool usesSeed() const override { return false; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
