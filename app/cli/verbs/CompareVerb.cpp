// `allocscope-cli compare WORKLOAD --config A --config B ...`: one program, several allocator
// configs, run in parallel on independent simulated GPUs; a table (or JSON) of peaks,
// fragmentation, driver calls, retries, OOMs and estimated allocator time.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string_view>

#include "allocator/compare/CompareReport.h"
#include "allocator/compare/ComparisonEngine.h"
#include "app/cli/DeviceOptions.h"
#include "app/cli/ProgramChoice.h"
#include "app/cli/TraceLimit.h"
#include "app/cli/VerbErrors.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbRecorder.h"

namespace allocscope::cli {
namespace {

constexpr std::string_view kVerb = "compare";  // its name in the verb table and its usage errors

const char* kUsage =
    "usage: allocscope-cli compare WORKLOAD|TRACE [--config STR]... [--param NAME=VALUE]... [--seed S]\n"
    "                              [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]\n"
    "                              [--threads N] [--json] [--db SESSION]\n"
    "\n"
    "Runs WORKLOAD under each --config (in parallel, each on its own simulated GPU) and prints one\n"
    "row per config: peak allocated and reserved, free memory stranded in partly used segments and\n"
    "1 - largest free block / total free at the peak, what empty_cache() could release at the end,\n"
    "cudaMalloc/cudaFree/map/unmap calls, retries, OOMs (count and first op) and the allocator time\n"
    "estimated from H100 measurements. Without --config: the five shared configs (default,\n"
    "expandable_segments:True, max_split_size_mb:128,\n"
    "garbage_collection_threshold:0.6,max_split_size_mb:256, backend:cudaMallocAsync).\n"
    "backend:cudaMallocAsync runs a model of the driver's pool (see AsyncBackendModel.h).\n"
    "TRACE (a snapshot .pickle or an RMM .csv) is replayed once under its recorded config and its\n"
    "ops are compared the same way (new segments placed by the simulated device).\n"
    "\n"
    "Options:\n"
    "  --config STR          a PYTORCH_CUDA_ALLOC_CONF to compare (repeatable; '' = defaults)\n"
    "  --param NAME=VALUE    set a workload parameter (repeatable)\n"
    "  --seed S              seed of workloads with randomness (default 1)\n"
    "  --memory-fraction F   set_per_process_memory_fraction(F) before the first op\n"
    "  --total-memory BYTES  simulated GPU with this total memory\n"
    "  --gpu PRESET          simulated GPU preset (default: the workload's own)\n"
    "  --threads N           parallel runs (default: all cores)\n"
    "  --json                print JSON instead of the table\n"
    "  --db SESSION          also record every run into SESSION (created if missing; cudaMallocAsync\n"
    "                        runs are not recorded); prints 'run N: NAME' lines on stderr\n"
    "\n"
    "Exit status: 0 compared (runs that OOM are results), 1 bad input, 2 usage.\n";

const char* const kSharedConfigs[] = {"", "expandable_segments:True", "max_split_size_mb:128",
                                      "garbage_collection_threshold:0.6,max_split_size_mb:256",
                                      "backend:cudaMallocAsync"};

int runCompare(VerbContext& ctx) {
    std::string workloadName;
    std::vector<std::string> rawOverrides;
    std::vector<std::string> configs;
    std::string seedText = "1";
    std::string threadsText = "0";
    bool json = false;
    std::optional<std::string> db;
    DeviceOptions deviceOptions;
    for (std::size_t i = 0; i < ctx.args.size();) {
        const std::string& a = ctx.args[i];
        if (a.rfind("--config=", 0) == 0) {
            configs.push_back(a.substr(9));
            ++i;
            continue;
        }
        if (a == "--config") {
            if (i + 1 >= ctx.args.size()) return usageError(ctx, kVerb, "--config needs a value");
            configs.push_back(ctx.args[i + 1]);
            i += 2;
            continue;
        }
        std::string error;
        if (deviceOptions.consume(ctx.args, i, error)) {
            if (!error.empty()) return usageError(ctx, kVerb, error);
            continue;
        }
        if (a == "--param" || a == "--seed" || a == "--threads" || a == "--db") {
            if (i + 1 >= ctx.args.size()) return usageError(ctx, kVerb, a + " needs a value");
            const std::string& v = ctx.args[i + 1];
            if (a == "--param") rawOverrides.push_back(v);
            if (a == "--seed") seedText = v;
            if (a == "--threads") threadsText = v;
            if (a == "--db") db = v;
            i += 2;
        } else if (a == "--json") {
            json = true;
            ++i;
        } else if (const int code = takeWorkload(ctx, kVerb, a, workloadName, i); code != kExitOk) {
            return code;
        }
    }
    if (const int code = requireWorkload(ctx, kVerb, workloadName); code != kExitOk) return code;
    if (configs.empty()) configs.assign(std::begin(kSharedConfigs), std::end(kSharedConfigs));
    try {
        int code = kExitOk;
        std::optional<ProgramChoice> choice = ProgramChoice::resolve(ctx, kVerb, workloadName, rawOverrides, code);
        if (!choice) return code;
        const bool isTrace = choice->isTrace();
        const alloc::Workload* workload = choice->workload();
        const auto digits = [](const std::string& t) {
            return !t.empty() && t.size() <= 19 && t.find_first_not_of("0123456789") == std::string::npos;
        };
        std::uint64_t seed = 0;
        if (!parseSeed(seedText, seed)) return badInput(ctx, "the seed must be a non-negative integer", "--seed " + seedText);
        if (!digits(threadsText) || threadsText.size() > 4) {
            return badInput(ctx, "--threads must be a small non-negative integer", "--threads " + threadsText);
        }

        std::vector<alloc::CompareConfig> compareConfigs;
        for (const std::string& text : configs) {
            std::string error;
            const std::optional<alloc::AllocatorConfig> parsed = parseConfigOption(text, error);
            if (!parsed) return badInput(ctx, "invalid allocator config: " + error, "--config '" + text + "'");
            compareConfigs.push_back({text.empty() ? "default" : text, *parsed});
        }
        std::string error;
        const std::optional<ResolvedDevice> device = resolveDevice(deviceOptions, error);
        if (!device) return badInput(ctx, error, "--gpu");
        alloc::CompareDevice target = simulatedTarget(*device, workload, deviceOptions);
        if (!choice->build(ctx, seed, target, !limitGiven(*device, deviceOptions), code)) return code;
        if (choice->limit) (json ? ctx.err : ctx.out) << choice->limit->describe() << "\n";
        const alloc::Program& program = choice->program;
        const alloc::StackTable& stacks = choice->stacks;
        const std::string& sourceKind = choice->sourceKind;
        const alloc::ProgramInfo info = isTrace ? alloc::ProgramInfo{workloadName, "", 0}
                                                : alloc::ProgramInfo{workload->name(), choice->paramsText, workload->usesSeed() ? seed : 0};
        alloc::CompareOptions options;
        options.threads = static_cast<unsigned>(std::stoul(threadsText));
        std::optional<DbRecorder> recorder;
        if (db) {  // each config's measured run is recorded as it runs (stdout keeps the table or JSON)
            const std::string source = isTrace ? workloadName : info.name + " (" + info.params + ")" +
                                                                    (workload->usesSeed() ? " seed " + std::to_string(seed) : std::string());
            const std::string base = isTrace ? std::filesystem::path(workloadName).filename().string() : info.name;
            recorder.emplace(*db);
            options.observerFor = recorder->observeRuns(program, isTrace ? nullptr : &stacks, target,
                                                        DbRecorder::describeRuns(base, sourceKind, source));
        }
        const std::vector<alloc::RunMetrics> runs = alloc::ComparisonEngine::compare(program, compareConfigs, target, options);
        const alloc::WindowFigures* window = choice->window ? &*choice->window : nullptr;  // marks window-only figures
        if (json) {
            ctx.out << alloc::CompareReport::json(info, target, runs, window);
        } else {
            ctx.out << info.name;
            if (!isTrace) {
                ctx.out << " (" << info.params << ")" << (workload->usesSeed() ? ", seed " + std::to_string(seed) : std::string());
            }
            ctx.out << " on " << target.name << ", " << program.ops.size() << " ops\n" << alloc::CompareReport::table(runs, window);
            for (const alloc::RunMetrics& r : runs) {
                if (!r.ooms.empty()) ctx.out << "\n" << r.label << ": OOM" << (window ? " (window)" : "") << " at op " << r.ooms.front().opIndex << ": " << r.ooms.front().message << "\n";
            }
        }
        for (const alloc::RunMetrics& r : runs) {
            if (!r.error) continue;
            // The runs were recorded up to the invalid op (as recordProgram stores them): say which.
            if (recorder) recorder->reportRecorded(ctx, ctx.err);
            return badInput(ctx, "the program is invalid: " + *r.error, workloadName);
        }
        if (recorder) return recorder->reportRecorded(ctx, ctx.err);
        return kExitOk;
    } catch (const alloc::WorkloadError& e) {
        return badInput(ctx, e.what(), e.where());
    }
}

const VerbRegistration kRegistration{Verb{std::string(kVerb), "run a workload under several allocator configs, side by side",
                                          kUsage, runCompare}};

}  // namespace
}  // namespace allocscope::cli
