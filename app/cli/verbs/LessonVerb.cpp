// `allocscope-cli lesson [NAME] [--json] [--dir DIR | --file FILE]`: runs one guided lesson (or
// all) headless and prints its claim, the measured numbers and the verdict computed from them.
#include <ostream>
#include <string_view>
#include <vector>

#include "app/cli/VerbErrors.h"
#include "app/cli/VerbRegistry.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/LessonLibrary.h"
#include "app/lessons/LessonLoader.h"
#include "app/lessons/LessonReport.h"
#include "app/lessons/LessonRunner.h"

namespace allocscope::cli {
namespace {

constexpr std::string_view kVerb = "lesson";  // its name in the verb table and its usage errors

const char* kUsage =
    "usage: allocscope-cli lesson [NAME|NUMBER] [--json] [--dir DIR | --file FILE]\n"
    "\n"
    "Runs a guided lesson on simulated GPUs: the program under each of the lesson's configs, then\n"
    "the lesson's verdict rule over the measured numbers (TRUE, FALSE or IT DEPENDS: the verdict is\n"
    "computed every time, never stored). Prints the question, the claim, a table of numbers (one\n"
    "column per config) and the verdict with why. Without NAME: every lesson, then one line each.\n"
    "\n"
    "Options:\n"
    "  --json        one JSON object (with a `verdict` field); without NAME a JSON array of them\n"
    "  --dir DIR     the lesson folder (default: $ALLOCSCOPE_LESSONS_DIR, else the installed\n"
    "                share/allocscope/lessons, else the source tree's; see `help lessons`)\n"
    "  --file FILE   run this lesson file instead of one from the folder\n"
    "\n"
    "Exit status: 0 ran (whatever the verdict), 1 bad lesson or input, 2 usage.\n";

int runLesson(VerbContext& ctx) {
    std::string folder = app::LessonLibrary::defaultFolder();
    std::string name;
    std::string file;
    bool json = false;
    for (std::size_t i = 0; i < ctx.args.size(); ++i) {
        const std::string& a = ctx.args[i];
        if (a == "--json") {
            json = true;
        } else if (a == "--dir" || a == "--file") {
            if (i + 1 >= ctx.args.size()) return usageError(ctx, kVerb, a + " needs a value");
            (a == "--dir" ? folder : file) = ctx.args[++i];
        } else if (a.rfind("--dir=", 0) == 0) {
            folder = a.substr(6);
        } else if (a.rfind("--file=", 0) == 0) {
            file = a.substr(7);
        } else if (a.size() > 1 && a[0] == '-') {
            return usageError(ctx, kVerb, "unknown option '" + a + "'");
        } else if (name.empty()) {
            name = a;
        } else {
            return usageError(ctx, kVerb, "more than one lesson given ('" + a + "')");
        }
    }
    if (!file.empty() && !name.empty()) return usageError(ctx, kVerb, "give a NAME or --file, not both");
    try {
        std::vector<app::Lesson> lessons;
        if (!file.empty()) {
            lessons.push_back(app::LessonLoader::loadFile(file));
        } else {
            lessons = app::LessonLibrary::load(folder);
            if (!name.empty()) lessons = {app::LessonLibrary::find(lessons, name, folder)};
        }
        const bool one = !name.empty() || !file.empty();
        std::vector<app::LessonResult> results;
        if (json && !one) ctx.out << "[";
        for (std::size_t i = 0; i < lessons.size(); ++i) {
            results.push_back(app::LessonRunner::run(lessons[i]));
            if (json) {
                ctx.out << (i ? ",\n" : "") << app::LessonReport::json(results.back());
            } else {
                ctx.out << (i ? "\n" : "") << app::LessonReport::text(results.back());
            }
            ctx.out.flush();
        }
        if (json) ctx.out << (one ? "\n" : "]\n");
        if (!json && !one) ctx.out << "\n" << app::LessonReport::table(results);
    } catch (const app::LessonError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << e.location() << ")\n";
        return kExitBadInput;
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{std::string(kVerb), "run a guided lesson (or all): claim, numbers, computed verdict", kUsage, runLesson}};

}  // namespace
}  // namespace allocscope::cli
