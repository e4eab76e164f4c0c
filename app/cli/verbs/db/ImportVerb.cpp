// `allocscope-cli import FILE... --db SESSION [--jobs N]`: replays recorded traces (PyTorch
// snapshot pickles or RMM CSVs) under their own settings into the caching allocator and records
// each replay as a new run of SESSION (created if missing), one run per device. Many files (a
// distributed job's per-rank snapshots) are read and replayed on N threads (storage::BatchImport)
// while the session's one writer writes; runs are numbered in the order the files are given.
// A replay that diverges from the recording is still recorded (exit 0): the divergence goes to
// stderr and into the run. A bad file is reported by name and the others still land (exit 1).
#include <filesystem>
#include <memory>
#include <ostream>
#include <stdexcept>

#include "app/cli/DeviceOptions.h"
#include "app/cli/TraceLimit.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/BatchImport.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage =
    "usage: allocscope-cli import FILE... --db SESSION [--jobs N] [--memory-fraction F] [--total-memory BYTES | --gpu PRESET]";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: import: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

// Every file is read and judged before the session is opened for it: a batch of bad traces never
// creates or touches the session (BatchImport asks for the writer at the first run to create).
int importInto(VerbContext& ctx, const std::vector<std::string>& files, const std::string& db,
               const storage::BatchImportOptions& options) {
    std::error_code ec;
    for (const std::string& file : files) {
        if (std::filesystem::exists(db, ec) && std::filesystem::exists(file, ec) && std::filesystem::equivalent(file, db, ec)) {
            ctx.err << "allocscope-cli: the trace and the session are the same file (" << db << ")\n";
            return kExitBadInput;
        }
    }
    std::unique_ptr<storage::SessionWriter> writer;
    std::vector<storage::BatchFileResult> results;
    try {
        results = storage::BatchImport::run(
            [&writer, &db]() -> storage::SessionWriter& {
                writer = std::make_unique<storage::SessionWriter>(db);
                return *writer;
            },
            files, options);
        writer.reset();  // commits and closes before the report
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    }
    // One file prints "run N" per run, as it always did; several name each run.
    const bool named = files.size() > 1;
    int code = kExitOk;
    for (const storage::BatchFileResult& result : results) {
        if (!result.error.empty()) {
            ctx.err << "allocscope-cli: " << result.error << "\n";
            code = kExitBadInput;
        }
        for (const storage::ImportedRun& run : result.runs) {
            ctx.out << "run " << run.runNumber;
            if (named) {
                ctx.out << ": " << std::filesystem::path(result.file).filename().string();
                if (result.rank) ctx.out << " (rank " << result.rank->rank << " from its " << result.rank->source << ")";
            }
            ctx.out << "\n";
            // Only a limit that was not the GPU's own (stdout keeps its 'run N' lines).
            if (!run.limit.empty() && run.limit.rfind("no OOM recorded", 0) != 0) {
                ctx.err << "allocscope-cli: run " << run.runNumber << ": " << run.limit << "\n";
            }
            if (!run.divergence.empty()) {
                ctx.err << "allocscope-cli: run " << run.runNumber << " diverged from the recording: " << run.divergence << "\n";
            }
        }
    }
    return code;
}

int runImport(VerbContext& ctx) {
    std::vector<std::string> files;
    std::string db;
    std::uint64_t jobs = 0;
    DeviceOptions device;
    for (std::size_t i = 0; i < ctx.args.size();) {
        std::string error;
        if (device.consume(ctx.args, i, error)) {
            if (!error.empty()) return usage(ctx, error);
            continue;
        }
        const std::string& arg = ctx.args[i];
        if (arg == "--db" || arg == "--jobs") {
            if (i + 1 >= ctx.args.size()) return usage(ctx, arg == "--db" ? "--db needs a session file" : "--jobs needs a number");
            if (arg == "--db") {
                db = ctx.args[i + 1];
            } else if (!parseCount(ctx.args[i + 1], jobs) || jobs == 0 || jobs > 1024) {
                return usage(ctx, "--jobs takes a number of threads from 1 to 1024 (got '" + ctx.args[i + 1] + "')");
            }
            i += 2;
        } else if (!arg.empty() && arg[0] == '-') {
            return usage(ctx, "unknown option '" + arg + "'");
        } else {
            files.push_back(arg);
            ++i;
        }
    }
    if (files.empty()) return usage(ctx, "a trace FILE is required");
    if (db.empty()) return usage(ctx, "--db SESSION is required");
    if (device.config) return usage(ctx, "import replays under the recorded settings; --config is for `replay`");
    std::string error;
    const std::optional<ResolvedDevice> gpu = resolveDevice(device, error);
    if (!gpu) {
        ctx.err << "allocscope-cli: " << error << " (--gpu)\n";
        return kExitBadInput;
    }
    try {
        storage::checkMemoryFraction(device.memoryFraction);  // once, not once per file
    } catch (const std::invalid_argument& e) {
        ctx.err << "allocscope-cli: " << e.what() << " (--memory-fraction)\n";
        return kExitBadInput;
    }
    storage::BatchImportOptions options;
    options.target.gpuName = gpu->name;
    options.target.totalMemory = gpu->totalMemory;
    options.target.otherMemory = gpu->otherMemory;
    options.target.memoryFraction = device.memoryFraction;
    // No device given: each trace's limit comes from its recorded OOM (and says so).
    options.target.inferLimit = !limitGiven(*gpu, device);
    options.jobs = static_cast<unsigned>(jobs);
    return importInto(ctx, files, db, options);
}

const VerbRegistration kRegistration{Verb{
    "import", "replay snapshots or RMM CSVs and record them as new runs of a session",
    std::string(kUsage) +
        "\n\nReplays each FILE (PyTorch snapshot pickle or RMM CSV) under its recorded settings and records\n"
        "each device's replay as a new run of SESSION (created if missing). Runs are numbered in the\n"
        "order the files are given. One FILE prints one 'run N' line per run; several print\n"
        "'run N: FILE (rank R from its file name|user_metadata)'. Files are read and replayed on N\n"
        "threads (--jobs, default: the number of cores) while one thread writes the session.\n"
        "A rank comes from the file's user_metadata ('rank=3', '{\"rank\": 3}') or else its name\n"
        "(rank3, rank_3, rank-03, _r3_); see `allocscope-cli ranks`.\n"
        "A big FILE is read in one pass through bounded buffers; its trace entries wait in an unnamed\n"
        "temporary file in $TMPDIR (unset: /tmp, or /var/tmp when /tmp is a tmpfs) until the replay: up to\n"
        "about half the FILE's size on disk (512 MiB for a 1 GB snapshot), never named, gone at the end.\n"
        "FILEs are only read. Exit 0 also when a replay diverged from the recording (said on stderr and\n"
        "stored with the run); 1 when a file was refused (each named on stderr; the others are\n"
        "imported) or the session cannot be written; 2 usage.",
    runImport}};

}  // namespace
}  // namespace allocscope::cli
