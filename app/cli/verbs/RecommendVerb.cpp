// `allocscope-cli recommend WORKLOAD`: the simplest allocator config within 1 % of the lowest
// peak reserved memory without an OOM, and the smallest GPU each config fits on.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string_view>

#include "allocator/compare/CompareReport.h"
#include "allocator/compare/Recommender.h"
#include "app/cli/DeviceOptions.h"
#include "app/cli/ProgramChoice.h"
#include "app/cli/TraceLimit.h"
#include "app/cli/VerbErrors.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbRecorder.h"

namespace allocscope::cli {
namespace {

constexpr std::string_view kVerb = "recommend";  // its name in the verb table and its usage errors

const char* kUsage =
    "usage: allocscope-cli recommend WORKLOAD|TRACE [--param NAME=VALUE]... [--seed S]\n"
    "                                [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]\n"
    "                                [--config STR] [--no-gpu-search] [--db SESSION]\n"
    "\n"
    "Runs WORKLOAD over a grid of configs (expandable_segments x max_split_size_mb {-,128,512} x\n"
    "roundup_power2_divisions {-,4}, x garbage_collection_threshold {-,0.6} when a memory fraction\n"
    "is in play, plus backend:cudaMallocAsync) and recommends the config with the fewest options\n"
    "whose peak reserved memory is within 1 % of the lowest among the runs without an OOM (the\n"
    "margin is shown). Then, per config, the smallest total GPU memory (256 MiB steps) on which the\n"
    "workload runs without an OOM. --config adds a config of your own to the grid.\n"
    "backend:cudaMallocAsync is shown but not recommended (its numbers come from a fitted model).\n"
    "TRACE (a snapshot .pickle or an RMM .csv) is replayed once under its recorded config and its\n"
    "ops are used as the program.\n"
    "--db SESSION also records every grid run (not the GPU-size search runs, nor cudaMallocAsync)\n"
    "into SESSION (created if missing) and prints 'run N: NAME' lines.\n"
    "\n"
    "Exit status: 0 done (also when every config OOMs), 1 bad input, 2 usage.\n";

int runRecommend(VerbContext& ctx) {
    std::string workloadName;
    std::vector<std::string> rawOverrides;
    std::string seedText = "1";
    bool gpuSearch = true;
    std::optional<std::string> db;
    DeviceOptions deviceOptions;
    for (std::size_t i = 0; i < ctx.args.size();) {
        std::string error;
        if (deviceOptions.consume(ctx.args, i, error)) {
            if (!error.empty()) return usageError(ctx, kVerb, error);
            continue;
        }
        const std::string& a = ctx.args[i];
        if (a == "--param" || a == "--seed" || a == "--db") {
            if (i + 1 >= ctx.args.size()) return usageError(ctx, kVerb, a + " needs a value");
            (a == "--param" ? rawOverrides.emplace_back() : a == "--db" ? db.emplace() : seedText) = ctx.args[i + 1];
            i += 2;
        } else if (a == "--no-gpu-search") {
            gpuSearch = false;
            ++i;
        } else if (const int code = takeWorkload(ctx, kVerb, a, workloadName, i); code != kExitOk) {
            return code;
        }
    }
    if (const int code = requireWorkload(ctx, kVerb, workloadName); code != kExitOk) return code;

    try {
        int code = kExitOk;
        std::optional<ProgramChoice> choice = ProgramChoice::resolve(ctx, kVerb, workloadName, rawOverrides, code);
        if (!choice) return code;
        const bool isTrace = choice->isTrace();
        const alloc::Workload* workload = choice->workload();
        std::uint64_t seed = 0;
        if (!parseSeed(seedText, seed)) return badInput(ctx, "the seed must be a non-negative integer", "--seed " + seedText);
        std::string error;
        const std::optional<ResolvedDevice> device = resolveDevice(deviceOptions, error);
        if (!device) return badInput(ctx, error, "--gpu");
        alloc::CompareDevice target = simulatedTarget(*device, workload, deviceOptions);
        if (!choice->build(ctx, seed, target, !limitGiven(*device, deviceOptions), code)) return code;
        if (choice->limit) (ctx.out) << choice->limit->describe() << "\n";
        const alloc::Program& program = choice->program;
        const alloc::StackTable& stacks = choice->stacks;
        const std::string& sourceKind = choice->sourceKind;
        const std::string title = isTrace ? workloadName
                                          : workload->name() + " (" + choice->paramsText + ")" +
                                                (workload->usesSeed() ? ", seed " + std::to_string(seed) : std::string());
        alloc::RecommendOptions options;
        options.searchGpuSize = gpuSearch;
        if (deviceOptions.config) {  // the user's own config joins the grid
            const std::optional<alloc::AllocatorConfig> parsed = parseConfigOption(*deviceOptions.config, error);
            if (!parsed) return badInput(ctx, "invalid allocator config: " + error, "--config '" + *deviceOptions.config + "'");
            options.extraConfigs.push_back({deviceOptions.config->empty() ? "default" : *deviceOptions.config, *parsed});
        }
        std::optional<DbRecorder> recorder;
        if (db) {  // the grid's measured runs are recorded as they run (not the GPU-size search's)
            const std::string base = isTrace ? std::filesystem::path(workloadName).filename().string() : workload->name();
            recorder.emplace(*db);
            options.observerFor = recorder->observeRuns(program, isTrace ? nullptr : &stacks, target,
                                                        DbRecorder::describeRuns(base, sourceKind, isTrace ? workloadName : title));
        }
        const alloc::Recommendation rec = alloc::Recommender::recommend(program, target, options);
        ctx.out << title << " on " << target.name << "\n" << alloc::CompareReport::recommendation(rec, choice->window ? &*choice->window : nullptr);
        if (recorder) return recorder->reportRecorded(ctx, ctx.out);
        return kExitOk;
    } catch (const alloc::WorkloadError& e) {
        return badInput(ctx, e.what(), e.where());
    }
}

const VerbRegistration kRegistration{Verb{std::string(kVerb), "recommend the simplest allocator config for a workload",
                                          kUsage, runRecommend}};

}  // namespace
}  // namespace allocscope::cli
