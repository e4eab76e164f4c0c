#pragma once
// The numbers a verdict rule can read, by name, from one run of a lesson. Run metrics come from
// RunMetrics (ComparisonEngine), `stat.KEY` is any of the 122 memory_stats() keys at the end of
// the run, and the config* metrics are ConfigParser's verdict on the run's config string (they
// exist even when the run could not run, and in config-only lessons).
#include <string>
#include <vector>

#include "app/lessons/LessonResult.h"
#include "app/lessons/VerdictRule.h"

namespace allocscope::app {

class LessonMetrics {
public:
    // 'n' a number, 't' a text, 0 unknown.
    static char kind(const std::string& name);
    // Byte counts are shown in MiB.
    static bool isBytes(const std::string& name);
    // A short human label: "peak reserved", "retries".
    static std::string label(const std::string& name);
    // The value for one run. Throws LessonError when the run did not run and the metric needs it.
    static MetricValue value(const std::string& name, const LessonRunResult& run);
    // "4052.0 MiB", "5", "yes", "abort-at-import"; "-" when the run has no such number.
    static std::string format(const std::string& name, const LessonRunResult& run);
    // The plain metric names (without the stat.* keys), for help texts.
    static std::vector<std::string> names();
};

}  // namespace allocscope::app
