#include "allocator/workloads/Workload.h"

#include <algorithm>

namespace allocscope::alloc {

namespace {

class WholeProgramSource final : public ProgramSource {
public:
    explicit WholeProgramSource(GeneratedProgram generated) : generated_(std::move(generated)) {}
    const std::vector<std::string>& labels() const override { return generated_.program.labels; }
    const StackTable& stacks() const override { return generated_.stacks; }
    bool nextChunk(std::vector<Op>& out) override {
        out.clear();
        const SpillArray<Op>& ops = generated_.program.ops;
        if (next_ >= ops.size()) return false;
        const std::size_t end = std::min(ops.size(), next_ + kChunk);
        out.assign(ops.begin() + static_cast<std::ptrdiff_t>(next_), ops.begin() + static_cast<std::ptrdiff_t>(end));
        next_ = end;
        return true;
    }

private:
    static constexpr std::size_t kChunk = 65536;
    GeneratedProgram generated_;
    std::size_t next_ = 0;
};

}  // namespace

std::unique_ptr<ProgramSource> Workload::open(const WorkloadParams& params, std::uint64_t seed) const {
    return std::make_unique<WholeProgramSource>(generate(params, seed));
}

}  // namespace allocscope::alloc
