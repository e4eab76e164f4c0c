#pragma once
// Shared by the lesson suites: where the shipped lessons are, and small lookups into results.
#include <QtTest>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/FileBytes.h"
#include "app/lessons/LessonResult.h"

namespace lessontest {

inline std::string lessonsDir() { return std::string(ALLOCSCOPE_SOURCE_DIR) + "/resources/lessons"; }

inline std::string readFile(const std::string& path) { return testfiles::readBytes(path); }

inline const allocscope::app::LessonRunResult& run(const allocscope::app::LessonResult& r, const std::string& id) {
    for (const auto& x : r.runs) {
        if (x.id == id) return x;
    }
    qFatal("no run %s", id.c_str());
}

inline constexpr double kMiB = 1024.0 * 1024.0;
inline double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / kMiB; }

}  // namespace lessontest
