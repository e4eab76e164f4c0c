#pragma once
// Builds the OomAnswer for a recording's first OOM (issue 35): replays the recording up to and
// including its oom entry under the limit (LimitInference's, or the one given) to read the state
// at the failure and PyTorch's message, then runs the recorded program under every config that
// `recommend` tries (Recommender::grid) at that limit, and at the ends of the limit's interval:
// where the verdict differs between them, the threshold is found by bisection.
#include <optional>
#include <string>

#include "allocator/compare/OomAnswer.h"
#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/Op.h"
#include "allocator/replay/MemoryLimit.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::alloc {

class OomAnalyzer {
public:
    static constexpr std::size_t kMaxHolders = 20;

    // `trace` must have an oom entry (OomAnalyzer::firstOom); `recorded`: its recorded config;
    // `limit`: the limit to answer at (Inferred, or Explicit). `program`: the recorded program
    // for the what-if (programFromTrace with room for the failed request: it is tried and dropped,
    // so op indexes match the replay's). Throws std::invalid_argument without an oom entry.
    static OomAnswer analyze(const RecordedTrace& trace, const AllocatorConfig& recorded, const MemoryLimit& limit,
                             const Program& program);
    // The first oom entry's index, if the trace has one.
    static std::optional<std::size_t> firstOom(const RecordedTrace& trace);
};

}  // namespace allocscope::alloc
