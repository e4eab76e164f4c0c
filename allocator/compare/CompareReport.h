#pragma once
// Text and JSON renderings of comparison results, shared by the CLI verbs (and usable by the
// GUI's export): a table with one row per config, and a JSON document with every metric.
#include <string>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/Recommender.h"

namespace allocscope::alloc {

class CompareReport {
public:
    static std::string table(const std::vector<RunMetrics>& runs);
    // One block of text per run: peaks, fragmentation at peak and end, counts, OOMs.
    static std::string details(const RunMetrics& run);
    static std::string json(const ProgramInfo& program, const CompareDevice& device,
                            const std::vector<RunMetrics>& runs);
    static std::string recommendation(const Recommendation& rec);
    static std::string mib(std::uint64_t bytes);  // "1194.0"
    static std::string jsonString(const std::string& text);
};

}  // namespace allocscope::alloc
