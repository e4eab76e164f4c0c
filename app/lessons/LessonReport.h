#pragma once
// Text and JSON renderings of a lesson's result, for `allocscope-cli lesson` (and for tests that
// read back what a person would see): the claim, a numbers table (one column per run), the rule
// that decided, and the verdict with its explanation.
#include <string>
#include <vector>

#include "app/lessons/LessonResult.h"

namespace allocscope::app {

class LessonReport {
public:
    // The metrics a result shows: the lesson's `show` list, then every metric a rule reads.
    static std::vector<std::string> shownMetrics(const Lesson& lesson);
    static std::string text(const LessonResult& result);
    static std::string json(const LessonResult& result);
    // One line per lesson: "NAME  VERDICT  title" (after running all).
    static std::string table(const std::vector<LessonResult>& results);
    // What the verdict is called in text: "TRUE", "FALSE", "IT DEPENDS".
    static std::string verdictWord(Outcome outcome);
    // One line describing the program ("workload llm-training (…) on h100-80gb").
    static std::string programLine(const LessonResult& result);
};

}  // namespace allocscope::app
