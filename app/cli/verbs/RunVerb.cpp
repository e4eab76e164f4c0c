// `allocscope-cli run WORKLOAD`: generates a demo workload and runs it through the allocator on
// a simulated GPU (the workload's own preset unless --gpu / --total-memory say otherwise).
// A run that ends in an OOM is a result (exit 0), not an error.
#include <fstream>
#include <optional>
#include <ostream>
#include <string_view>

#include "allocator/compare/CompareReport.h"
#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/EventCsvSink.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/cli/DeviceOptions.h"
#include "app/cli/RealGpuRun.h"
#include "app/cli/VerbErrors.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbRecorder.h"

namespace allocscope::cli {
namespace {

constexpr std::string_view kVerb = "run";  // its name in the verb table and its usage errors

const char* kUsage =
    "usage: allocscope-cli run WORKLOAD [--param NAME=VALUE]... [--seed S] [--events-csv FILE|-] [--db SESSION]\n"
    "                          [--config STR] [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]\n"
    "\n"
    "Generates WORKLOAD (see `allocscope-cli workloads`) and runs it through the allocator on a\n"
    "simulated GPU: the workload's own preset unless --gpu or --total-memory is given (--gpu cuda:N:\n"
    "on that real GPU, with the decisions of a simulated GPU of its size). Prints peaks,\n"
    "fragmentation at the peak and at the end, driver calls, retries, OOMs and an estimated allocator\n"
    "time. --events-csv writes every allocator event (seq,op,action,address,size,rounded_size,stream,\n"
    "segment,pool,cause,stack); '-' writes it to stdout and the report to stderr. The same workload,\n"
    "parameters and seed always give a byte-identical file.\n"
    "\n"
    "Options:\n"
    "  --param NAME=VALUE    set a workload parameter (repeatable)\n"
    "  --seed S              seed of workloads with randomness (default 1)\n"
    "  --db SESSION          also record the run into SESSION (created if missing); prints 'run N: NAME'\n";

const char* kUsageTail = "\nExit status: 0 ran (also when it ends in an OOM), 1 bad input, 2 usage.\n";

int runRun(VerbContext& ctx) {
    std::string workloadName;
    std::vector<std::pair<std::string, std::string>> overrides;
    std::vector<std::string> rawOverrides;
    std::string seedText = "1";
    std::optional<std::string> eventsCsv;
    std::optional<std::string> db;
    DeviceOptions deviceOptions;
    for (std::size_t i = 0; i < ctx.args.size();) {
        std::string error;
        if (deviceOptions.consume(ctx.args, i, error)) {
            if (!error.empty()) return usageError(ctx, kVerb, error);
            continue;
        }
        const std::string& a = ctx.args[i];
        const bool hasValue = i + 1 < ctx.args.size();
        if (a == "--param" || a == "--seed" || a == "--events-csv" || a == "--db") {
            if (!hasValue) return usageError(ctx, kVerb, a + " needs a value");
            const std::string& v = ctx.args[i + 1];
            if (a == "--param") rawOverrides.push_back(v);
            if (a == "--seed") seedText = v;
            if (a == "--events-csv") eventsCsv = v;
            if (a == "--db") db = v;
            i += 2;
        } else if (const int code = takeWorkload(ctx, kVerb, a, workloadName, i); code != kExitOk) {
            return code;
        }
    }
    if (const int code = requireWorkload(ctx, kVerb, workloadName); code != kExitOk) return code;
    try {
        const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get(workloadName);
        for (const std::string& raw : rawOverrides) overrides.push_back(alloc::WorkloadParams::splitAssignment(raw));
        std::uint64_t seed = 1;
        if (!parseSeed(seedText, seed)) return badInput(ctx, "the seed must be a non-negative integer", "--seed " + seedText);
        const alloc::WorkloadParams params = workload.resolve(overrides);

        std::string error;
        std::optional<ResolvedDevice> device = resolveDevice(deviceOptions, error);
        if (!device) return badInput(ctx, error, "--gpu");
        const alloc::CompareDevice target = simulatedTarget(*device, &workload, deviceOptions);
        alloc::CompareConfig config{"default", alloc::AllocatorConfig{}};
        if (deviceOptions.config) {
            const std::optional<alloc::AllocatorConfig> parsed = parseConfigOption(*deviceOptions.config, error);
            if (!parsed) return badInput(ctx, "invalid allocator config: " + error, "--config '" + *deviceOptions.config + "'");
            config = {deviceOptions.config->empty() ? "default" : *deviceOptions.config, *parsed};
        }

        const alloc::GeneratedProgram generated = workload.generate(params, seed);
        std::ofstream file;
        std::ostream* csvOut = nullptr;
        if (eventsCsv) {
            if (*eventsCsv == "-") {
                csvOut = &ctx.out;
            } else {
                file.open(*eventsCsv, std::ios::binary | std::ios::trunc);
                if (!file) return badInput(ctx, "cannot write the events file", *eventsCsv);
                csvOut = &file;
            }
        }
        std::optional<alloc::EventCsvSink> csv;
        if (csvOut != nullptr) csv.emplace(*csvOut);
        alloc::CompareOptions options;
        options.sink = csv ? &*csv : nullptr;
        const DbRun run{workload.name() + " · " + config.label, "demo",
                        workload.name() + " (" + params.text() + ")" + (workload.usesSeed() ? " seed " + std::to_string(seed) : std::string()),
                        deviceOptions.config.value_or(""), config.config};
        // On the simulated GPU the measured run is the recorded one; a real GPU's run is recorded
        // afterwards on the simulated device of the same size (a session stores simulated runs).
        std::optional<DbRecorder> recorder;
        if (db && !device->real()) {
            recorder.emplace(*db);
            options.observer = recorder->observeRuns(generated.program, &generated.stacks, target,
                                                     [&run](const alloc::CompareConfig&) { return run; })(0, config);
        }
        alloc::RunMetrics metrics;
        std::string realGpuNotes;
        if (device->real()) {
            if (!runOnRealGpu(*device, generated.program, config, target, options, metrics, realGpuNotes, error)) {
                return badInput(ctx, error, "--gpu " + device->name);
            }
        } else {
            metrics = alloc::ComparisonEngine::runOne(generated.program, config, target, options);
        }
        std::ostream& report = (eventsCsv && *eventsCsv == "-") ? ctx.err : ctx.out;
        report << "workload:          " << workload.name() << " (" << params.text() << ")"
               << (workload.usesSeed() ? ", seed " + std::to_string(seed) : std::string()) << "\n"
               << "device:            " << target.name << " (" << target.totalMemory << " B)\n"
               << realGpuNotes
               << alloc::CompareReport::details(metrics);
        if (metrics.asyncBackend && csvOut != nullptr) {
            report << "note: the cudaMallocAsync model records no allocator events; the CSV has only its header\n";
        }
        if (file.is_open()) {
            file.flush();
            if (!file) {
                if (recorder) recorder->reportRecorded(ctx, report);
                return badInput(ctx, "could not write the events file", *eventsCsv);
            }
        }
        if (metrics.error) {
            if (recorder) recorder->reportRecorded(ctx, report);  // recorded up to the invalid op
            return badInput(ctx, "the generated program is invalid: " + *metrics.error, workload.name());
        }
        if (recorder) return recorder->reportRecorded(ctx, report);
        if (db) {  // a real GPU's run: the same program and config on the simulated device, into the session
            DbRecorder afterwards(*db);
            return afterwards.recordPrograms(ctx, report, generated.program, &generated.stacks, {run}, target);
        }
        return kExitOk;
    } catch (const alloc::WorkloadError& e) {
        return badInput(ctx, e.what(), e.where());
    }
}

std::string usageText() { return std::string(kUsage) + DeviceOptions::usage() + DeviceOptions::realGpuUsage() + kUsageTail; }

const VerbRegistration kRegistration{Verb{std::string(kVerb), "run a demo workload through the allocator", usageText(), runRun}};

}  // namespace
}  // namespace allocscope::cli
