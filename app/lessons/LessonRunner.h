#pragma once
// Runs a lesson headless: builds its program (a demo workload, or a bundled real trace turned
// into a program by replaying it under its recorded config), runs it under every config of the
// lesson (ComparisonEngine::runOne on a simulated GPU), asks ConfigParser for PyTorch's verdict on
// every config string, evaluates the verdict rules over what was measured and resolves the steps
// to events of the runs. Nothing Qt; the GUI calls it from a worker thread.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "app/lessons/Lesson.h"
#include "app/lessons/LessonResult.h"

namespace allocscope::app {

class LessonRunner {
public:
    // Called before each run (done of total) and once at the end (total of total).
    using Progress = std::function<void(std::size_t done, std::size_t total, const std::string& what)>;

    // Throws LessonError for a trace that cannot be read, a program a workload refuses, or a rule
    // that reads a number a run does not have. `cancel` set: returns early with cancelled = true.
    static LessonResult run(const Lesson& lesson, const Progress& progress = {}, const std::atomic<bool>* cancel = nullptr);

    // The verdict from measured runs: the first rule that holds, else `otherwise`. decidedBy is
    // the rule's text or "otherwise".
    static Outcome decide(const Lesson& lesson, const std::vector<LessonRunResult>& runs, std::string& decidedBy);
};

}  // namespace allocscope::app
