#pragma once
// random-mix: a stress mix of sizes, lifetimes and three streams, `events` ops long. It streams:
// open() generates chunk by chunk with constant memory, so 10^7 ops cost no more than 10^4.
#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class RandomMixWorkload final : public Workload {
public:
    std::string name() const override { return "random-mix"; }
    std::string summary() const override;
    std::string description() const override;
    std::vector<ParamSpec> params() const override;
    bool usesSeed() const override { return true; }
    GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const override;
    std::unique_ptr<ProgramSource> open(const WorkloadParams& params, std::uint64_t seed) const override;
};

}  // namespace allocscope::alloc
