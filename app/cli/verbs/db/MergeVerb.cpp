// `allocscope-cli merge OUT IN...`: copies the runs of several sessions into a new one (a
// cluster's per-node sessions into one file for the desktop). The inputs are only read; OUT must
// not exist and appears only once it holds every run intact.
#include <ostream>

#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/SessionMerge.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage = "usage: allocscope-cli merge OUT IN...";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: merge: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

int runMerge(VerbContext& ctx) {
    std::vector<std::string> paths;
    for (const std::string& arg : ctx.args) {
        if (arg == "--help" || arg == "-h") {
            ctx.out << VerbRegistry::instance().find("merge")->usage << "\n";
            return kExitOk;
        }
        if (arg.size() > 1 && arg[0] == '-') return usage(ctx, "unknown option '" + arg + "'");
        paths.push_back(arg);
    }
    if (paths.size() < 2) return usage(ctx, "needs the new file's name and at least one session to copy from");
    const std::string output = paths.front();
    const std::vector<std::string> inputs(paths.begin() + 1, paths.end());
    std::vector<storage::SessionMerge::MergedRun> runs;
    try {
        runs = storage::SessionMerge::merge(inputs, output);
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    }
    for (const auto& run : runs) {
        ctx.out << "run " << run.number << ": " << run.name << " (" << run.input << ", run " << run.sourceNumber << ")\n";
    }
    ctx.out << "merged " << runs.size() << " run" << (runs.size() == 1 ? "" : "s") << " of " << inputs.size() << " session"
            << (inputs.size() == 1 ? "" : "s") << " into " << output << "\n";
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "merge", "copy the runs of several sessions into a new session (per-node sessions into one file)",
    std::string(kUsage) +
        "\n\nWrites a new session OUT holding every run of each IN, in the order given (each input's runs\n"
        "in their order), numbered from 1, with their events, keyframes, heatmaps, summaries, phases,\n"
        "stacks and verdicts. Prints one line per run: `run N: NAME (IN, run M)`.\n"
        "The inputs are opened read-only and never written. OUT must not exist; it appears only once\n"
        "the merge is complete and checked, so a failed merge leaves nothing there.\n"
        "Exit 1 if OUT exists, or an input is not an intact session of this schema (an older one:\n"
        "migrate it first with allocscope-cli migrate).",
    runMerge}};

}  // namespace
}  // namespace allocscope::cli
