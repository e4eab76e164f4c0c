// `allocscope-cli import FILE --db SESSION`: replays a recorded trace (PyTorch snapshot pickle or
// RMM CSV) under its own settings into the caching allocator and records the replay as a new
// run of SESSION (created if missing), one run per device. Prints the created run numbers.
// A replay that diverges from the recording is still recorded (exit 0): the divergence goes to
// stderr and into the run.
#include <filesystem>
#include <ostream>
#include <sstream>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/replay/TraceReplayer.h"
#include "app/cli/DeviceOptions.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceImport.h"
#include "storage/session/SessionRecorder.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage = "usage: allocscope-cli import FILE --db SESSION [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: import: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

std::string divergenceText(const alloc::ReplayResult& result) {
    std::ostringstream out;
    if (result.divergence) out << "op " << result.divergence->opIndex << " (trace entry " << result.divergence->entryIndex << "): " << result.divergence->what;
    if (result.unexpectedOomOp) {
        if (out.tellp() > 0) out << "; ";
        out << "an allocation failed at op " << *result.unexpectedOomOp << " that succeeded in the recording";
    }
    if (result.layoutDifference) {
        if (out.tellp() > 0) out << "; ";
        out << "final layout: " << *result.layoutDifference;
    }
    return out.str();
}

int runImport(VerbContext& ctx) {
    std::string file, db;
    DeviceOptions device;
    for (std::size_t i = 0; i < ctx.args.size();) {
        std::string error;
        if (device.consume(ctx.args, i, error)) {
            if (!error.empty()) return usage(ctx, error);
            continue;
        }
        const std::string& arg = ctx.args[i];
        if (arg == "--db") {
            if (i + 1 >= ctx.args.size()) return usage(ctx, "--db needs a session file");
            db = ctx.args[i + 1];
            i += 2;
        } else if (!arg.empty() && arg[0] == '-') {
            return usage(ctx, "unknown option '" + arg + "'");
        } else if (file.empty()) {
            file = arg;
            ++i;
        } else {
            return usage(ctx, "more than one FILE given ('" + arg + "')");
        }
    }
    if (file.empty()) return usage(ctx, "a trace FILE is required");
    if (db.empty()) return usage(ctx, "--db SESSION is required");
    if (device.config) return usage(ctx, "import replays under the recorded settings; --config is for `replay`");
    std::error_code ec;
    if (std::filesystem::exists(db, ec) && std::filesystem::equivalent(file, db, ec)) {
        ctx.err << "allocscope-cli: the trace and the session are the same file (" << db << ")\n";
        return kExitBadInput;
    }
    std::vector<alloc::RecordedTrace> traces;
    try {
        traces = storage::importTraceFile(file);
    } catch (const formats::FormatError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << file << ": " << e.location() << ")\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        ctx.err << "allocscope-cli: " << e.what() << " (" << file << ")\n";
        return kExitBadInput;
    }
    if (traces.empty()) {
        ctx.err << "allocscope-cli: the trace holds no allocator events and no segments (" << file << ")\n";
        return kExitBadInput;
    }
    std::string error;
    const std::optional<ResolvedDevice> gpu = resolveDevice(device, error);
    if (!gpu) {
        ctx.err << "allocscope-cli: " << error << " (--gpu)\n";
        return kExitBadInput;
    }
    // Judge every device's settings before the session is touched.
    std::vector<alloc::AllocatorConfig> configs;
    for (const alloc::RecordedTrace& trace : traces) {
        const std::optional<alloc::AllocatorConfig> config = parseConfigOption(trace.settings.value_or(""), error);
        if (!config) {
            ctx.err << "allocscope-cli: the recorded allocator settings are not valid: " << error << " (" << file
                    << ": allocator_settings.PYTORCH_CUDA_ALLOC_CONF)\n";
            return kExitBadInput;
        }
        if (config->backend == alloc::Backend::CudaMallocAsync) {
            ctx.err << "allocscope-cli: backend:cudaMallocAsync keeps no segments to replay into (" << file << ")\n";
            return kExitBadInput;
        }
        configs.push_back(*config);
    }
    try {
        storage::SessionWriter writer(db);
        for (std::size_t t = 0; t < traces.size(); ++t) {
            const alloc::RecordedTrace& trace = traces[t];
            alloc::SimulatedDevice fresh(gpu->totalMemory, gpu->otherMemory);
            const alloc::CachingAllocator initial(configs[t], fresh);
            storage::RunInfo info;
            info.name = std::filesystem::path(file).filename().string() + (traces.size() > 1 ? " device " + std::to_string(trace.device) : "");
            info.sourceKind = trace.hasSegmentEvents ? "snapshot" : "csv";
            info.source = file + " (" + trace.origin + ")";
            info.config = trace.settings.value_or("");
            info.gpu = gpu->name;
            info.totalMemory = gpu->totalMemory;
            info.memoryFraction = device.memoryFraction.value_or(1.0);
            storage::SessionRecorder recorder(writer, info, initial.stats());
            alloc::ReplayOptions options;
            options.config = configs[t];
            options.memoryFraction = device.memoryFraction;
            options.totalMemory = gpu->totalMemory;
            options.otherMemory = gpu->otherMemory;
            options.continueAfterOom = true;
            options.sink = &recorder;
            const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, options);
            // The replay syncs no stats per op: store its final stats (retries, syncs) at the end.
            recorder.syncStats(result.stats, true);
            const std::string divergence = divergenceText(result);
            recorder.finish(&trace.stacks, divergence);
            ctx.out << "run " << recorder.runNumber() << "\n";
            if (!divergence.empty()) {
                ctx.err << "allocscope-cli: run " << recorder.runNumber() << " diverged from the recording: " << divergence << "\n";
            }
        }
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "import", "replay a snapshot or RMM CSV and record it as new runs of a session",
    std::string(kUsage) +
        "\n\nReplays FILE (PyTorch snapshot pickle or RMM CSV) under its recorded settings and records each\n"
        "device's replay as a new run of SESSION (created if missing); prints one 'run N' line per run.\n"
        "FILE is only read. Exit 0 also when the replay diverged from the recording (said on stderr and\n"
        "stored with the run); 1 bad input; 2 usage.",
    runImport}};

}  // namespace
}  // namespace allocscope::cli
