#include "app/cli/ProgramChoice.h"

#include <filesystem>

#include "allocator/workloads/WorkloadRegistry.h"
#include "app/cli/TraceProgram.h"
#include "app/cli/VerbErrors.h"

namespace allocscope::cli {

std::optional<ProgramChoice> ProgramChoice::resolve(VerbContext& ctx, std::string_view verb, const std::string& name,
                                                    const std::vector<std::string>& rawParams, int& code) {
    ProgramChoice choice;
    choice.name_ = name;
    choice.workload_ = alloc::WorkloadRegistry::instance().find(name);
    const bool isFile = choice.workload_ == nullptr && std::filesystem::is_regular_file(name);
    // A name with a slash or a dot was meant as a file: say that it is not there rather than
    // listing the workloads.
    const bool looksLikePath = name.find('/') != std::string::npos || name.find('.') != std::string::npos;
    if (choice.workload_ == nullptr && !isFile && looksLikePath) {
        code = badInput(ctx, "no such workload, and no trace file there", name);
        return std::nullopt;
    }
    if (!isFile) choice.workload_ = &alloc::WorkloadRegistry::instance().get(name);  // throws: unknown
    if (isFile && !rawParams.empty()) {
        code = usageError(ctx, verb, "--param applies to workloads, not to a TRACE");
        return std::nullopt;
    }
    for (const std::string& raw : rawParams) choice.overrides_.push_back(alloc::WorkloadParams::splitAssignment(raw));
    return choice;
}

bool ProgramChoice::build(VerbContext& ctx, std::uint64_t seed, alloc::CompareDevice& device, bool inferLimit, int& code) {
    if (isTrace()) {
        std::optional<TraceProgram> fromTrace = traceProgram(ctx, name_, device, inferLimit, code);
        if (!fromTrace) return false;
        limit = fromTrace->limit;
        program = std::move(fromTrace->program);
        sourceKind = fromTrace->sourceKind;
        window = fromTrace->window;
        return true;
    }
    const alloc::WorkloadParams params = workload_->resolve(overrides_);
    alloc::GeneratedProgram generated = workload_->generate(params, seed);
    program = std::move(generated.program);
    stacks = std::move(generated.stacks);
    paramsText = params.text();
    return true;
}

}  // namespace allocscope::cli
