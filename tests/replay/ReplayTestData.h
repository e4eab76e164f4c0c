#pragma once
// Shared helpers of the replay suites: the shared traces' ground truth (W__C.json) and options
// built from it, and key-by-key statistic comparison that names every difference.
#include <QString>
#include <QStringList>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "allocator/core/DeviceStats.h"
#include "allocator/replay/TraceReplayer.h"

namespace replaytest {

struct GroundTruth {
    QString name;                 // "frag101__default"
    std::string conf;             // PYTORCH_CUDA_ALLOC_CONF
    std::optional<double> fraction;
    std::uint64_t totalMemory = 0;
    std::map<std::string, std::int64_t> stats;  // the 122 keys
    std::string summary;
    bool loaded = false;
};

QString tracesDir();
// Other people's snapshots (../shared/field-snapshots, never copied into the project): the path
// of `name` in $ALLOCSCOPE_FIELD_SNAPSHOTS or beside the source tree, "" where absent (QSKIP).
QString fieldSnapshot(const QString& name);
// The 12 shared traces (W__C without the async ones), sorted.
QStringList traceNames();
// From `dir` (default: the shared traces).
GroundTruth loadGroundTruth(const QString& name, const QString& dir = QString());
// Options for replaying under the ground truth's config, fraction and total memory.
allocscope::alloc::ReplayOptions optionsFor(const GroundTruth& truth);
// "" when all 122 keys match; otherwise one line per differing key (key: want vs got).
QString diffStats(const std::map<std::string, std::int64_t>& want, const allocscope::alloc::DeviceStats& got);
// Everything that is not exact about a replay, as one message ("" = exact).
QString describeInexact(const allocscope::alloc::ReplayResult& result);

}  // namespace replaytest
