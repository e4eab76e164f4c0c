#pragma once
// WORKLOAD|TRACE, what `compare` and `recommend` run under every config they try: a demo workload
// by its name (with --param overrides and a seed), or else a recorded trace file (snapshot pickle
// or RMM CSV) whose ops become the program.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/WindowFigures.h"
#include "allocator/core/Op.h"
#include "allocator/replay/MemoryLimit.h"
#include "allocator/workloads/Workload.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {

class ProgramChoice {
public:
    // A registered workload named `name`, else an existing file there (a trace). On bad input
    // prints one line and returns nullopt with `code` set: a path where no file is (bad input),
    // --param given with a trace (a usage error of `verb`). A plain name that is neither throws
    // alloc::WorkloadError (the registry lists the workloads), as a bad --param does.
    static std::optional<ProgramChoice> resolve(VerbContext& ctx, std::string_view verb, const std::string& name,
                                                const std::vector<std::string>& rawParams, int& code);

    bool isTrace() const { return workload_ == nullptr; }
    const alloc::Workload* workload() const { return workload_; }  // null for a trace

    // Makes the program: the workload generated with its parameters and `seed`, or the trace read
    // and turned into ops for `device` (its errors print one line, set `code` and return false).
    // `inferLimit`: a trace's limit is inferred from its recorded OOM (traceProgram), `device`
    // updated to it and `limit` set.
    bool build(VerbContext& ctx, std::uint64_t seed, alloc::CompareDevice& device, bool inferLimit, int& code);

    // After build():
    alloc::Program program;
    alloc::StackTable stacks;          // the workload's call stacks (a trace's program has none)
    std::string sourceKind = "demo";   // "demo", or the trace's "snapshot" / "csv"
    std::string paramsText;            // the workload's resolved parameters, "" for a trace
    std::optional<alloc::MemoryLimit> limit;  // a trace built with inferLimit: the limit and whence
    std::optional<alloc::WindowFigures> window;  // a trace whose history starts mid-run (TraceProgram)

private:
    const alloc::Workload* workload_ = nullptr;
    std::string name_;  // as given: the workload or the trace file
    std::vector<std::pair<std::string, std::string>> overrides_;
};

}  // namespace allocscope::cli
