#pragma once
// A guided lesson as its JSON file describes it (resources/lessons/*.json): one piece of common
// allocator advice, the program that tests it, the runs to compare, the rule that turns measured
// numbers into a verdict, and the steps that walk a student through the result. A lesson holds no
// verdict: LessonRunner computes it from the runs every time. Adding a lesson is adding a file.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace allocscope::app {

// What every run of the lesson executes.
struct LessonProgram {
    enum class Kind { Workload, Trace, ConfigOnly };
    Kind kind = Kind::Workload;
    std::string workload;  // Workload: a WorkloadRegistry name
    std::vector<std::pair<std::string, std::string>> params;  // Workload: "name" -> value text
    std::uint64_t seed = 1;
    std::string trace;       // Trace: path as written in the file (relative to the lesson file)
    std::string tracePath;   // Trace: resolved path
    std::string gpu;         // GPU preset; "" = the workload's own (h100-80gb for a trace)
    std::optional<double> memoryFraction;  // set_per_process_memory_fraction before the first op
};

// One side of the comparison: a config (and optionally other parameters) to run the program under.
struct LessonRun {
    std::string id;      // how rules and steps name it ("A", "expandable")
    std::string label;   // shown in tables
    std::string config;  // PYTORCH_CUDA_ALLOC_CONF, exactly as a user would write it
    std::vector<std::pair<std::string, std::string>> params;  // overrides on top of the program's
    std::optional<double> memoryFraction;  // overrides the program's
};

enum class Outcome { True, False, Depends };
const char* outcomeName(Outcome outcome);  // "true", "false", "depends"

struct LessonRule {
    std::string when;  // a rule expression (VerdictRule.h)
    Outcome outcome = Outcome::True;
    std::string where;  // "verdict.rules[0].when" for messages
};

// Where a step puts the scrubber: "start", "peak", "oom", "end", "op:N", "event:N", "phase:NAME".
struct LessonStep {
    std::string text;
    std::string run;   // a LessonRun id ("" = the first run)
    std::string at = "end";
    std::string view;  // "segments", "heatmap", "timeline", "summary", "compare"
    std::optional<std::uint64_t> blockOp;  // select the block allocated by this op
};

struct Lesson {
    std::string name;  // NAME on the command line
    int number = 0;    // order in lists
    std::string title;
    std::string question;
    std::string claim;  // the advice as it is commonly stated
    std::string file;   // the lesson file it came from
    LessonProgram program;
    std::vector<LessonRun> runs;
    std::vector<std::string> show;  // metrics for the numbers table, in order
    std::vector<LessonRule> rules;  // first that holds decides
    Outcome otherwise = Outcome::False;
    std::string textTrue, textFalse, textDepends;  // why, for each outcome
    std::vector<LessonStep> steps;

    const LessonRun* findRun(const std::string& id) const {
        for (const LessonRun& r : runs) {
            if (r.id == id) return &r;
        }
        return nullptr;
    }
    const std::string& text(Outcome outcome) const {
        return outcome == Outcome::True ? textTrue : outcome == Outcome::False ? textFalse : textDepends;
    }
};

}  // namespace allocscope::app
