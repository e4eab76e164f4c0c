#pragma once
// Text and JSON renderings of comparison results, shared by the CLI verbs (and usable by the
// GUI's export): a table with one row per config, and a JSON document with every metric.
#include <string>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/Recommender.h"
#include "allocator/compare/WindowFigures.h"

namespace allocscope::alloc {

// With a `window` (the program replays a truncated recorded history), every figure that covers
// only the recorded window carries WindowFigures::kMark: in the table its column's header, in
// the text beside the figure, followed by the window's legend line; the JSON gets a "window"
// object that names them (null without a window).
class CompareReport {
public:
    static std::string table(const std::vector<RunMetrics>& runs, const WindowFigures* window = nullptr);
    // One block of text per run: peaks, fragmentation at peak and end, counts, OOMs.
    static std::string details(const RunMetrics& run, const WindowFigures* window = nullptr);
    static std::string json(const ProgramInfo& program, const CompareDevice& device,
                            const std::vector<RunMetrics>& runs, const WindowFigures* window = nullptr);
    static std::string recommendation(const Recommendation& rec, const WindowFigures* window = nullptr);
    static std::string mib(std::uint64_t bytes);  // "1194.0"
    static std::string jsonString(const std::string& text);
};

}  // namespace allocscope::alloc
