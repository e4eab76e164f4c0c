// `allocscope-cli lessons [--dir DIR]`: the guided lessons, one per line, NAME first, no header.
#include <ostream>
#include <string>

#include "app/cli/VerbRegistry.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonLibrary.h"

namespace allocscope::cli {
namespace {

const char* kUsage =
    "usage: allocscope-cli lessons [--dir DIR]\n"
    "\n"
    "Lists the guided lessons, one per line: NAME, its number, its title (tab-separated, no header).\n"
    "Each lesson takes one piece of common PYTORCH_CUDA_ALLOC_CONF advice, runs it and computes a\n"
    "verdict; `allocscope-cli lesson NAME` runs one.\n"
    "\n"
    "Options:\n"
    "  --dir DIR   the lesson folder (default: $ALLOCSCOPE_LESSONS_DIR, else share/allocscope/lessons\n"
    "              beside the installed binary, else the source tree's resources/lessons)\n"
    "\n"
    "Exit status: 0 listed, 1 a lesson file is bad, 2 usage.\n";

// The help names the folder the default resolves to, so "which lessons does this binary see?"
// (an installed package vs a development build) has an answer without reading code.
std::string usage() { return std::string(kUsage) + "\nDefault folder here: " + app::LessonLibrary::defaultFolder() + "\n"; }

int runLessons(VerbContext& ctx) {
    std::string folder = app::LessonLibrary::defaultFolder();
    for (std::size_t i = 0; i < ctx.args.size(); ++i) {
        const std::string& a = ctx.args[i];
        if (a == "--dir" && i + 1 < ctx.args.size()) {
            folder = ctx.args[++i];
        } else if (a.rfind("--dir=", 0) == 0) {
            folder = a.substr(6);
        } else {
            ctx.err << "allocscope-cli: unexpected argument '" << a << "' (lessons; see `allocscope-cli help lessons`)\n";
            return kExitUsage;
        }
    }
    try {
        for (const app::Lesson& lesson : app::LessonLibrary::load(folder)) {
            ctx.out << lesson.name << "\t" << lesson.number << "\t" << lesson.title << "\n";
        }
    } catch (const app::LessonError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << e.location() << ")\n";
        return kExitBadInput;
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{"lessons", "list the guided lessons (NAME first, one per line)", usage(), runLessons}};

}  // namespace
}  // namespace allocscope::cli
