// `allocscope-cli oom TRACE [--json]`: the answer to a recorded OOM (issue 35). The limit the run
// hit is inferred from the recording (TraceLimit) unless given; the recording is replayed up to
// its failure under it; then every config `recommend` tries runs the recorded program at that
// limit (and at its interval's ends). The first line answers "would another setting have avoided
// this OOM?". OomAnalyzer builds the answer, OomReport prints it.
#include <ostream>
#include <string_view>

#include "allocator/compare/OomAnalyzer.h"
#include "allocator/compare/OomReport.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "app/cli/DeviceOptions.h"
#include "app/cli/TraceLimit.h"
#include "app/cli/VerbErrors.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/SessionRunTrace.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"

namespace allocscope::cli {
namespace {

constexpr std::string_view kVerb = "oom";

const char* kUsage =
    "usage: allocscope-cli oom TRACE [--device N] [--json]\n"
    "                          [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]\n"
    "       allocscope-cli oom --db SESSION --run N [--json] [device options]\n"
    "\n"
    "Answers a recorded out-of-memory error: would another allocator setting have avoided it?\n"
    "The first line says. Then: what was requested and on which stream; the memory limit the\n"
    "run hit, inferred from the recording (the replay under every limit in the printed interval\n"
    "reproduces it) unless given; reserved, allocated and cached-free bytes at the failure; the\n"
    "largest free block against the request (fragmentation, or really full); the largest live\n"
    "blocks and their call stacks; PyTorch's OOM message; and a what-if over the configs\n"
    "`recommend` tries, each run at that limit: OOM or not, where, peak reserved, headroom, and\n"
    "whether the verdict holds over the whole interval ('OOMs below 6.10 GiB' when it does not).\n"
    "\n"
    "Options:\n"
    "  --device N            the device of a multi-device snapshot (default: the first with an OOM)\n"
    "  --db SESSION --run N  a run of a session instead of a file (its stored events, replayed)\n"
    "  --json                the same answer as one JSON object\n"
    "  --memory-fraction F, --total-memory BYTES, --gpu PRESET\n"
    "                        answer at this limit instead of the inferred one\n"
    "\n"
    "Exit status: 0 answered, 1 bad input (no OOM in the trace, unreadable file), 2 usage.\n";

int runOom(VerbContext& ctx) {
    std::string path;
    DeviceOptions deviceOptions;
    std::optional<long long> deviceIndex;
    std::optional<std::string> db;
    std::optional<int> runNumber;
    bool json = false;
    for (std::size_t i = 0; i < ctx.args.size();) {
        std::string error;
        if (deviceOptions.consume(ctx.args, i, error)) {
            if (!error.empty()) return usageError(ctx, kVerb, error);
            continue;
        }
        const std::string& a = ctx.args[i];
        if (a == "--json") {
            json = true;
            ++i;
        } else if (a == "--device") {
            if (i + 1 >= ctx.args.size()) return usageError(ctx, kVerb, "--device needs a device number");
            const std::string& v = ctx.args[i + 1];
            if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos) {
                return usageError(ctx, kVerb, "--device needs a device number");
            }
            deviceIndex = std::stoll(v);
            i += 2;
        } else if (a == "--db") {
            if (i + 1 >= ctx.args.size()) return usageError(ctx, kVerb, "--db needs a session file");
            db = ctx.args[i + 1];
            i += 2;
        } else if (a == "--run") {
            const std::string v = i + 1 < ctx.args.size() ? ctx.args[i + 1] : std::string();
            if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) == 0) {
                return usageError(ctx, kVerb, "--run needs a run number (from 1)");
            }
            runNumber = std::stoi(v);
            i += 2;
        } else if (a.size() > 1 && a[0] == '-') {
            return usageError(ctx, kVerb, "unknown option '" + a + "'");
        } else if (path.empty()) {
            path = a;
            ++i;
        } else {
            return usageError(ctx, kVerb, "more than one TRACE given ('" + a + "')");
        }
    }
    if (db && !path.empty()) return usageError(ctx, kVerb, "give a TRACE or --db SESSION --run N, not both");
    if (db.has_value() != runNumber.has_value()) return usageError(ctx, kVerb, "--db and --run go together");
    if (db && deviceIndex) return usageError(ctx, kVerb, "--device is for a TRACE; a session's run is one device");
    if (path.empty() && !db) return usageError(ctx, kVerb, "oom needs a TRACE file (or --db SESSION --run N)");
    if (deviceOptions.config) return usageError(ctx, kVerb, "--config does not apply: the what-if tries recommend's configs");
    if (deviceOptions.touch) return usageError(ctx, kVerb, "--touch / --no-touch need a real GPU run; oom only simulates");

    std::vector<alloc::RecordedTrace> traces;
    if (db) {
        int code = kExitOk;
        std::optional<alloc::RecordedTrace> run = sessionRunTrace(ctx, *db, *runNumber, code);
        if (!run) return code;
        traces.push_back(std::move(*run));
        path = *db + ": run " + std::to_string(*runNumber);
    } else {
        try {
            traces = storage::TraceFile::read(path).traces;
        } catch (const formats::FormatError& e) {
            return badInput(ctx, e.problem(), e.location());
        }
    }
    const alloc::RecordedTrace* trace = nullptr;
    for (const alloc::RecordedTrace& t : traces) {
        if (deviceIndex ? t.device == *deviceIndex : alloc::OomAnalyzer::firstOom(t).has_value()) {
            trace = &t;
            break;
        }
    }
    if (trace == nullptr && deviceIndex) return badInput(ctx, "no device " + std::to_string(*deviceIndex) + " in the trace", path);
    if (trace == nullptr || !alloc::OomAnalyzer::firstOom(*trace)) {
        return badInput(ctx, "the recording has no out-of-memory error (no oom trace entry) to answer",
                        trace && !db ? path + ": device " + std::to_string(trace->device) : path);
    }
    std::string error;
    const std::optional<ResolvedDevice> device = resolveDevice(deviceOptions, error);
    if (!device) return badInput(ctx, error, "--gpu");
    if (device->real()) return badInput(ctx, "oom answers on a simulated GPU only", "--gpu " + *deviceOptions.gpu);
    const std::string recordedText = trace->settings.value_or("");
    const std::optional<alloc::AllocatorConfig> recorded = parseConfigOption(recordedText, error);
    if (!recorded) {
        return badInput(ctx, "the recorded allocator settings are not valid: " + error,
                        path + ": allocator_settings.PYTORCH_CUDA_ALLOC_CONF");
    }
    if (recorded->backend == alloc::Backend::CudaMallocAsync) {
        return badInput(ctx, "backend:cudaMallocAsync keeps no segments to replay into", path + ": allocator_settings");
    }
    const alloc::MemoryLimit limit = traceLimit(*trace, *recorded, *device, deviceOptions);
    // Room for every request: the failed one is tried and dropped, so op indexes match the replay's.
    constexpr std::uint64_t kRoom = 1ull << 50;
    const alloc::Program program = alloc::programFromTrace(*trace, {std::nullopt, kRoom, limit.otherMemory});
    const alloc::OomAnswer answer = alloc::OomAnalyzer::analyze(*trace, *recorded, limit, program);
    ctx.out << (json ? alloc::OomReport::json(answer) : alloc::OomReport::text(answer));
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{std::string(kVerb), "answer a recorded OOM: its limit, its holders, and which config avoids it",
                                          kUsage, runOom}};

}  // namespace
}  // namespace allocscope::cli
