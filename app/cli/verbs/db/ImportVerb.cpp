// `allocscope-cli import FILE --db SESSION`: replays a recorded trace (PyTorch snapshot pickle or
// RMM CSV) under its own settings into the caching allocator and records the replay as a new
// run of SESSION (created if missing), one run per device. Prints the created run numbers.
// A replay that diverges from the recording is still recorded (exit 0): the divergence goes to
// stderr and into the run.
#include <filesystem>
#include <ostream>

#include "app/cli/DeviceOptions.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/formats/FormatError.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage = "usage: allocscope-cli import FILE --db SESSION [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: import: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

// Reads and judges FILE before the session is opened: a bad trace never creates or touches it.
int importInto(VerbContext& ctx, const std::string& file, const std::string& db, const storage::ImportTarget& target) {
    std::error_code ec;
    if (std::filesystem::exists(db, ec) && std::filesystem::exists(file, ec) && std::filesystem::equivalent(file, db, ec)) {
        ctx.err << "allocscope-cli: the trace and the session are the same file (" << db << ")\n";
        return kExitBadInput;
    }
    try {
        const storage::PreparedImport prepared = storage::prepareImport(file, target);
        storage::SessionWriter writer(db);
        for (const storage::ImportedRun& run : storage::recordImport(writer, prepared)) {
            ctx.out << "run " << run.runNumber << "\n";
            if (!run.divergence.empty()) {
                ctx.err << "allocscope-cli: run " << run.runNumber << " diverged from the recording: " << run.divergence << "\n";
            }
        }
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    } catch (const formats::FormatError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << e.location() << ")\n";
        return kExitBadInput;
    } catch (const std::exception& e) {
        ctx.err << "allocscope-cli: " << e.what() << "\n";  // the message says where
        return kExitBadInput;
    }
    return kExitOk;
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
    std::string error;
    const std::optional<ResolvedDevice> gpu = resolveDevice(device, error);
    if (!gpu) {
        ctx.err << "allocscope-cli: " << error << " (--gpu)\n";
        return kExitBadInput;
    }
    storage::ImportTarget target;
    target.gpuName = gpu->name;
    target.totalMemory = gpu->totalMemory;
    target.otherMemory = gpu->otherMemory;
    target.memoryFraction = device.memoryFraction;
    return importInto(ctx, file, db, target);
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
