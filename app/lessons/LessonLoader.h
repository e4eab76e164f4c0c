#pragma once
// Reads a lesson file (JSON, with the project's own JsonReader) and checks everything that can be
// checked without running: required keys and their types, unknown keys (typos), the workload and
// its parameters, the GPU preset, the trace file, run ids, every verdict rule (parsed against the
// known metrics and the lesson's runs) and every step. Errors say what and where:
// LessonError("expected a string", "basics.json: runs[1].config (line 12, column 17)").
#include <string>
#include <string_view>

#include "app/lessons/Lesson.h"

namespace allocscope::app {

class LessonLoader {
public:
    // Throws LessonError; the file is only read.
    static Lesson loadFile(const std::string& path);
    // `text` as if read from `path` (relative trace paths resolve against path's folder).
    static Lesson parse(std::string_view text, const std::string& path);
};

}  // namespace allocscope::app
