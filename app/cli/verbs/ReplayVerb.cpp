// `allocscope-cli replay TRACE`: replays a recorded PyTorch snapshot (or RMM CSV) through the
// allocator. Under the recorded config it checks the replay against the recording (every segment
// event, every block address, the final layout); under another config it is a what-if whose new
// segments are placed by the driver placement model.
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string_view>

#include "allocator/compare/WindowFigures.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/replay/ConfigReplay.h"
#include "allocator/replay/ReplayVerdict.h"
#include "allocator/replay/TraceReplayer.h"
#include "app/cli/DeviceOptions.h"
#include "app/cli/RealGpuReplay.h"
#include "app/cli/StatsJson.h"
#include "app/cli/TraceLimit.h"
#include "app/cli/TruncationReport.h"
#include "app/cli/VerbErrors.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbRecorder.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"

namespace allocscope::cli {
namespace {

constexpr std::string_view kVerb = "replay";  // its name in the verb table and its usage errors

struct ReplayArgs {
    std::string trace;
    DeviceOptions device;
    std::optional<std::string> statsJson;
    std::optional<std::string> segmentsJson;
    std::optional<long long> deviceIndex;
    std::optional<std::string> compareWith;
    std::optional<std::string> db;
    std::string placement = "driver";
    bool summary = false;
    bool continueAfterOom = false;
};

const char* kUsage =
    "usage: allocscope-cli replay TRACE [--config STR] [--memory-fraction F]\n"
    "                             [--total-memory BYTES | --gpu PRESET] [--device N]\n"
    "                             [--stats-json FILE|-] [--summary] [--segments-json FILE]\n"
    "                             [--continue-after-oom] [--db SESSION]\n"
    "\n"
    "Replays a PyTorch memory snapshot (.pickle) or an RMM log (.csv) through the allocator.\n"
    "Without --config the snapshot's recorded PYTORCH_CUDA_ALLOC_CONF is used (PyTorch's defaults\n"
    "for a CSV) and the replay is checked against the recording; with another config it is a\n"
    "what-if whose new segments are placed by a model of the CUDA driver.\n"
    "\n"
    "Options:\n";

const char* kUsageTail =
    "  --device N            only this device of a multi-device snapshot\n"
    "  --stats-json FILE|-   write memory_stats() (122 keys) as one JSON object ('-': stdout only)\n"
    "  --summary             print memory_summary()\n"
    "  --segments-json FILE  write the final snapshot `segments` list\n"
    "  --continue-after-oom  a what-if that runs out of memory skips that tensor and goes on\n"
    "  --placement MODEL     what-if placement of new segments: driver (default), reference\n"
    "                        (the recorded run's addresses only) or device (the simulator's own)\n"
    "  --compare-with FILE   a recording of the same program under the what-if's config: report\n"
    "                        the first segment event, block address or final layout that differs\n"
    "  --db SESSION          also record each device's replay as a new run of SESSION (created if\n"
    "                        missing; divergence stored with it); prints 'run N: NAME'\n"
    "\n"
    "Exit status: 0 replayed (also when it diverges or ends in an OOM), 1 bad input, 2 usage.\n";

bool writeFile(const std::string& path, const std::string& text, std::ostream& out) {
    if (path == "-") {
        out << text;
        return true;
    }
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    return static_cast<bool>(file);
}

int runReplay(VerbContext& ctx) {
    ReplayArgs args;
    for (std::size_t i = 0; i < ctx.args.size();) {
        std::string error;
        if (args.device.consume(ctx.args, i, error)) {
            if (!error.empty()) return usageError(ctx, kVerb, error);
            continue;
        }
        const std::string& a = ctx.args[i];
        auto value = [&](std::string& out) {
            if (i + 1 >= ctx.args.size()) return false;
            out = ctx.args[i + 1];
            i += 2;
            return true;
        };
        std::string v;
        if (a == "--summary") {
            args.summary = true;
            ++i;
        } else if (a == "--continue-after-oom") {
            args.continueAfterOom = true;
            ++i;
        } else if (a == "--stats-json") {
            if (!value(v)) return usageError(ctx, kVerb, "--stats-json needs a file or -");
            args.statsJson = v;
        } else if (a == "--segments-json") {
            if (!value(v)) return usageError(ctx, kVerb, "--segments-json needs a file");
            args.segmentsJson = v;
        } else if (a == "--db") {
            if (!value(v)) return usageError(ctx, kVerb, "--db needs a session file");
            args.db = v;
        } else if (a == "--compare-with") {
            if (!value(v)) return usageError(ctx, kVerb, "--compare-with needs a trace file");
            args.compareWith = v;
        } else if (a == "--placement") {
            if (!value(v) || (v != "driver" && v != "reference" && v != "device")) {
                return usageError(ctx, kVerb, "--placement needs driver, reference or device");
            }
            args.placement = v;
        } else if (a == "--device") {
            if (!value(v) || v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 6) {
                return usageError(ctx, kVerb, "--device needs a device number");
            }
            args.deviceIndex = std::stoll(v);
        } else if (a.size() > 1 && a[0] == '-') {
            return usageError(ctx, kVerb, "unknown option '" + a + "'");
        } else if (args.trace.empty()) {
            args.trace = a;
            ++i;
        } else {
            return usageError(ctx, kVerb, "more than one TRACE given ('" + a + "')");
        }
    }
    if (args.trace.empty()) return usageError(ctx, kVerb, "replay needs a TRACE file");
    if (args.segmentsJson && *args.segmentsJson == "-" && args.statsJson && *args.statsJson == "-") {
        return usageError(ctx, kVerb, "--stats-json and --segments-json cannot both write to stdout");
    }
    const bool statsToStdout = (args.statsJson && *args.statsJson == "-") || (args.segmentsJson && *args.segmentsJson == "-");
    std::ostream& report = statsToStdout ? ctx.err : ctx.out;

    std::vector<alloc::RecordedTrace> traces;
    std::vector<alloc::RecordedTrace> compareTraces;
    for (const std::string* path : {&args.trace, args.compareWith ? &*args.compareWith : nullptr}) {
        if (!path) continue;
        try {
            (path == &args.trace ? traces : compareTraces) = storage::TraceFile::read(*path).traces;
        } catch (const formats::FormatError& e) {
            return badInput(ctx, e.problem(), e.location());
        }
    }
    if (args.deviceIndex) {
        std::vector<alloc::RecordedTrace> chosen;
        for (alloc::RecordedTrace& t : traces) {
            if (t.device == *args.deviceIndex) chosen.push_back(std::move(t));
        }
        if (chosen.empty()) return badInput(ctx, "no device " + std::to_string(*args.deviceIndex) + " in the trace", args.trace);
        traces = std::move(chosen);
    }
    if (traces.size() > 1 && (args.statsJson || args.segmentsJson)) {
        return usageError(ctx, kVerb, "the trace has " + std::to_string(traces.size()) +
                                   " devices: choose one with --device for --stats-json/--segments-json");
    }

    std::string error;
    const std::optional<ResolvedDevice> device = resolveDevice(args.device, error);
    if (!device) return badInput(ctx, error, "--gpu");
    bool announced = false;  // the default GPU is announced once, after the input was judged valid
    std::optional<DbRecorder> session;
    if (args.db) session.emplace(*args.db);

    for (const alloc::RecordedTrace& trace : traces) {
        const std::string recordedText = trace.settings.value_or("");
        const std::optional<alloc::AllocatorConfig> recorded = parseConfigOption(recordedText, error);
        if (!recorded && !args.device.config) {
            return badInput(ctx, "the recorded allocator settings are not valid: " + error,
                            args.trace + ": allocator_settings.PYTORCH_CUDA_ALLOC_CONF");
        }
        alloc::AllocatorConfig config = recorded.value_or(alloc::AllocatorConfig{});
        if (args.device.config) {
            const std::optional<alloc::AllocatorConfig> given = parseConfigOption(*args.device.config, error);
            if (!given) return badInput(ctx, "invalid allocator config: " + error, "--config '" + *args.device.config + "'");
            config = *given;
        }
        if (config.backend == alloc::Backend::CudaMallocAsync) {
            return badInput(ctx, "backend:cudaMallocAsync keeps no segments to replay into",
                            "--config '" + args.device.config.value_or(recordedText) + "'");
        }
        alloc::ReplayOptions options;
        options.config = config;
        // The limit: as given, else inferred from the recorded OOM (under the recorded config:
        // it is the device's, whatever config the what-if then runs).
        const alloc::MemoryLimit limit = traceLimit(trace, recorded.value_or(alloc::AllocatorConfig{}), *device, args.device);
        alloc::LimitInference::apply(limit, options);
        options.continueAfterOom = args.continueAfterOom;
        // The program (48 bytes an op, ~1.1 ops an entry) is kept only to run it again on a real
        // GPU: held for nothing, it made a 1 GB snapshot's replay take 720 MB instead of ~130.
        options.keepOps = device->real();
        const alloc::RecordedTrace* compare = nullptr;
        for (const alloc::RecordedTrace& t : compareTraces) {
            if (t.device == trace.device) compare = &t;
        }
        if (args.compareWith && !compare) {
            return badInput(ctx, "no device " + std::to_string(trace.device) + " in the trace to compare with", *args.compareWith);
        }
        options.expected = compare;
        if (device->defaulted && limit.source == alloc::MemoryLimit::Source::Preset && !announced) {
            ctx.err << "allocscope-cli: no --total-memory or --gpu given: simulating " << device->name << " ("
                    << device->totalMemory << " B)\n";
            announced = true;
        }
        RealGpuReplay realGpu(*device, options);  // --gpu cuda:N: captures the events to run again on the GPU
        // Checked under the recorded settings, a what-if otherwise (the rule the GUI shares).
        const alloc::WhatIfPlacement placement = args.placement == "reference" ? alloc::WhatIfPlacement::Reference
                                                 : args.placement == "device"  ? alloc::WhatIfPlacement::Device
                                                                               : alloc::WhatIfPlacement::Driver;
        alloc::ConfigReplay plan(trace, recorded, options, placement);
        const bool exact = plan.checked();
        alloc::ReplayResult result;
        if (!session) result = plan.run();
        if (session) {  // the same replay, recorded as it runs
            const std::string file = std::filesystem::path(args.trace).filename().string() +
                                     (traces.size() > 1 ? " device " + std::to_string(trace.device) : std::string());
            const std::string label = args.device.config ? (args.device.config->empty() ? "default" : *args.device.config) : "";
            const DbRun run{exact ? file : file + " · " + label, trace.hasSegmentEvents ? "snapshot" : "csv",
                            args.trace + " (" + trace.origin + ")", exact ? recordedText : *args.device.config, config};
            int code = kExitOk;
            std::optional<alloc::ReplayResult> replayed =
                session->recordReplay(ctx, report, trace, plan.options(), run, device->real() ? device->name : limit.deviceName,
                                      plan.whatIfRecordedConfig(), code);
            if (!replayed) return code;
            result = std::move(*replayed);
        }

        const std::string configText = alloc::formatConfig(config);
        // A history that starts mid-run says so before anything else (its totals are partial).
        for (const std::string& line : truncationReport(result)) report << line << "\n";
        report << "replay of " << args.trace << " (" << trace.origin << "): " << trace.entries.size()
               << " trace entries, " << result.opCount << " ops, " << result.events << " events\n";
        report << "  config '" << configText << "'" << (args.device.config ? "" : " (recorded)") << ", GPU "
               << (device->real() ? device->name : limit.deviceName) << " (" << limit.totalMemory << " B)";
        if (limit.memoryFraction) report << ", memory fraction " << *limit.memoryFraction;
        report << "\n  " << limit.describe();
        report << "\n  " << (exact ? "replayed with the recorded addresses" : "what-if: new segments placed by the " + args.placement + " model")
               << ", " << result.emptyCacheSteps.size() << " explicit empty_cache() inferred\n";
        const alloc::DeviceStats& s = result.stats;
        // After a truncated history these four count the recorded window only: marked, and said why.
        // (Appended, not `" " + std::string(...)`: g++ 12 -O3 flags that with a false -Wrestrict.)
        std::string w;
        if (result.truncation) w.append(" ").append(alloc::WindowFigures::kMark);
        report << "  peak reserved " << s.reserved_bytes[alloc::kAggregate].peak << " B" << w << ", peak allocated "
               << s.allocated_bytes[alloc::kAggregate].peak << " B" << w << ", device allocs " << s.num_device_alloc << w
               << ", OOMs " << s.num_ooms << w << "\n";
        if (result.truncation) report << "  " << alloc::WindowFigures(trace.entries.size(), *result.truncation).legend() << "\n";
        // How firm the numbers are: the decisions that modelled addresses settled (AddressTies.h).
        if (!exact || result.addressTies.modelled > 0) report << "  address ties: " << result.addressTies.describe() << "\n";
        if (!realGpu.finish(options, trace.device, result, report, error)) return badInput(ctx, error, "--gpu " + device->name);
        if (exact || compare) {
            report << "  verdict: " << alloc::replayVerdict(result, (compare ? compare : &trace)->entries.size()) << "\n";
            if (result.exact() && trace.hasSegmentEvents) {
                report << "  reproduces the recording: every segment event, block address and the final layout\n";
                // The one statistic the events cannot pin: an empty_cache() that released nothing
                // (torch.cuda.graph calls one before every capture) leaves no trace entry.
                report << "  num_sync_all_streams " << result.stats.num_sync_all_streams
                       << " counts the syncs the trace shows; PyTorch's is higher by every empty_cache() that released nothing\n";
            } else if (result.exact()) {
                report << "  reproduces every recorded block address (the log has no segment events to check)\n";
            }
        }
        // A replay that went on after an OOM can skip thousands of frees: show the first few.
        constexpr std::size_t kMaxNotes = 5;
        for (std::size_t n = 0; n < result.notes.size() && n < kMaxNotes; ++n) {
            ctx.err << "allocscope-cli: note: " << result.notes[n] << "\n";
        }
        if (result.notes.size() > kMaxNotes) {
            ctx.err << "allocscope-cli: note: ... and " << result.notes.size() - kMaxNotes << " more\n";
        }
        if (result.divergence) {
            ctx.err << "allocscope-cli: the replay diverges from the " << (compare ? "compared " : "") << "recording at op " << result.divergence->opIndex
                    << " (trace entry " << result.divergence->entryIndex << "): " << result.divergence->what << "\n";
        }
        if (result.layoutDifference) {
            ctx.err << "allocscope-cli: the final layout differs from the snapshot: " << *result.layoutDifference << "\n";
        }
        if (result.unexpectedOomOp) {
            ctx.err << "allocscope-cli: the program would have raised at op " << *result.unexpectedOomOp << ": "
                    << result.unexpectedOomMessage << (result.stoppedEarly ? " (replay stopped there)" : "") << "\n";
        }
        if (args.summary) report << result.summary;
        if (args.statsJson && !writeFile(*args.statsJson, statsToJson(result.stats), ctx.out)) {
            return badInput(ctx, "cannot write the statistics", *args.statsJson);
        }
        if (args.segmentsJson &&
            !writeFile(*args.segmentsJson, segmentsToJson(result.segments, trace.device, &trace.stacks), ctx.out)) {
            return badInput(ctx, "cannot write the segments", *args.segmentsJson);
        }
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{std::string(kVerb), "replay a PyTorch snapshot or RMM log through the allocator",
                                          std::string(kUsage) + DeviceOptions::usage() + DeviceOptions::realGpuUsage() + kUsageTail, runReplay}};

}  // namespace
}  // namespace allocscope::cli
