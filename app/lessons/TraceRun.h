#pragma once
// A bundled real PyTorch trace run under a lesson's config, the way `allocscope-cli replay` does
// it, so a lesson shows PyTorch's own numbers: under the recorded config an exact replay (the
// recorded addresses), under another config a what-if whose new segments the driver placement
// model places (README: kv_growth_limited -> expandable and train_gpt -> msplit128 land exactly on
// PyTorch's recordings). The result is measured as RunMetrics, like a ComparisonEngine run, except
// the fragmentation at the peak (the replay keeps no layout there: atPeak stays empty).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/compare/RunMetrics.h"
#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceReplayer.h"

namespace allocscope::app {

struct TraceRunDevice {
    std::uint64_t totalMemory = 0;
    std::uint64_t otherMemory = 0;
    std::optional<double> memoryFraction;
};

// How one setup replays: the options (pointing into `placement`) and, for a what-if, the
// recorded config TraceReplayer::replayWhatIf needs. The GUI records a lesson's trace runs into a
// session with exactly this plan (storage::recordReplay), so the session holds the same events.
struct TracePlan {
    alloc::ReplayOptions options;
    std::unique_ptr<alloc::PlacementModel> placement;
    std::optional<alloc::AllocatorConfig> whatIfRecordedConfig;
};

class TraceRun {
public:
    static TracePlan plan(const alloc::RecordedTrace& trace, const alloc::AllocatorConfig& config, const TraceRunDevice& device,
                          const std::optional<std::vector<std::size_t>>& emptyCacheSteps);
    // The recorded config of the trace (PyTorch's defaults when none or unreadable).
    static alloc::AllocatorConfig recordedConfig(const alloc::RecordedTrace& trace);
    // Native backend only. `program` receives the ops the replay applied; `sink` (may be null)
    // every event. `emptyCacheSteps`: the program's explicit empty_cache() calls, as the exact
    // replay of the recorded setup inferred them (`inferred` receives them); nullopt = infer them
    // here, which is only right under the recorded config and memory fraction: elsewhere the
    // inference would add empty_cache() calls to imitate the recorded run's retries.
    static alloc::RunMetrics run(const alloc::RecordedTrace& trace, const alloc::AllocatorConfig& config,
                                 const TraceRunDevice& device, const std::optional<std::vector<std::size_t>>& emptyCacheSteps,
                                 alloc::EventSink* sink, alloc::Program& program, std::vector<std::size_t>* inferred = nullptr);
};

}  // namespace allocscope::app
