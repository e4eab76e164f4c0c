// `allocscope-cli demo --db FILE`: creates the session `scripts/run` opens the GUI on. Two runs of
// one program to compare (fragmentation-101 under PyTorch's defaults and under
// expandable_segments:True, aligned by op index) and one OOM to look at (oom-with-free-memory on
// its 24 GB preset: "Tried to allocate 256.00 MiB" with gigabytes reserved but unallocated).
// Lives in verbs/db/ because it needs the session database.
#include <filesystem>
#include <ostream>
#include <string_view>

#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/cli/VerbErrors.h"
#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbRecorder.h"

namespace allocscope::cli {
namespace {

constexpr std::string_view kVerb = "demo";  // its name in the verb table and its usage errors

const char* kUsage =
    "usage: allocscope-cli demo --db FILE\n"
    "\n"
    "Creates the demo session FILE (it must not exist yet): fragmentation-101 under the default config\n"
    "and under expandable_segments:True (the same program, aligned by op index), and\n"
    "oom-with-free-memory under the default config on the 24gb preset (it ends in an OOM).\n"
    "Prints one 'run N: NAME' line per run.\n"
    "\n"
    "Exit status: 0 created, 1 bad input (FILE exists, cannot be written), 2 usage.\n";

int recordWorkload(VerbContext& ctx, DbRecorder& recorder, const std::string& name, const std::vector<std::string>& configs) {
    const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get(name);
    const alloc::WorkloadParams params = workload.resolve();
    const alloc::GeneratedProgram generated = workload.generate(params, 1);
    std::vector<DbRun> runs;
    for (const std::string& text : configs) {
        DbRun run;
        run.name = workload.name() + " · " + (text.empty() ? "default" : text);
        run.source = workload.name() + " (" + params.text() + ")" + (workload.usesSeed() ? " seed 1" : "");
        run.configText = text;
        run.config.expandableSegments = text == "expandable_segments:True";
        runs.push_back(run);
    }
    return recorder.recordPrograms(ctx, ctx.out, generated.program, &generated.stacks, runs,
                                   alloc::CompareDevice::ofPreset(*alloc::findGpuPreset(workload.defaultGpu())));
}

int runDemo(VerbContext& ctx) {
    std::string db;
    for (std::size_t i = 0; i < ctx.args.size();) {
        const std::string& a = ctx.args[i];
        if (a == "--db") {
            if (i + 1 >= ctx.args.size()) return usageError(ctx, kVerb, "--db needs a session file");
            db = ctx.args[i + 1];
            i += 2;
        } else if (a.rfind("--db=", 0) == 0) {
            db = a.substr(5);
            ++i;
        } else {
            return usageError(ctx, kVerb, "unexpected argument '" + a + "'");
        }
    }
    if (db.empty()) return usageError(ctx, kVerb, "demo needs --db FILE");
    std::error_code ec;
    if (std::filesystem::exists(db, ec) || std::filesystem::is_symlink(db, ec)) {
        ctx.err << "allocscope-cli: the file already exists; demo only creates a new session (" << db << ")\n";
        return kExitBadInput;
    }
    int code = kExitOk;
    {
        DbRecorder recorder(db);
        code = recordWorkload(ctx, recorder, "fragmentation-101", {"", "expandable_segments:True"});
        if (code == kExitOk) code = recordWorkload(ctx, recorder, "oom-with-free-memory", {""});
    }
    // A half-made demo is no use to anyone: remove the file this call created.
    if (code != kExitOk) std::filesystem::remove(db, ec);
    return code;
}

const VerbRegistration kRegistration{Verb{std::string(kVerb), "create the demo session the GUI opens first", kUsage, runDemo}};

}  // namespace
}  // namespace allocscope::cli
