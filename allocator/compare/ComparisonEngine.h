#pragma once
// Runs one program under several allocator configs, each run independent on its own simulated
// device, in parallel on the available cores (std::thread), and measures each run (RunMetrics).
// Runs are aligned by op index: every run applies the same ops, and op indexes in OOMs, peaks
// and timelines refer to the same program positions. The program may come from a workload
// generator or from a recorded trace (the replay turns a trace into a Program).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "allocator/compare/CostModel.h"
#include "allocator/compare/RunMetrics.h"
#include "allocator/compare/RunObserver.h"
#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/DeviceMemory.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"

namespace allocscope::alloc {

struct GpuPreset;

struct CompareConfig {
    std::string label;  // shown in tables ("default", "expandable_segments:True", ...)
    AllocatorConfig config;
};

struct CompareDevice {
    std::string name = "h100-80gb";
    std::uint64_t totalMemory = 85'017'493'504ull;
    std::uint64_t otherMemory = 552'402'944ull;
    std::optional<double> memoryFraction;  // set_per_process_memory_fraction before the first op

    // The GPU a preset describes: its name, memory and CUDA context; no memory fraction.
    static CompareDevice ofPreset(const GpuPreset& preset);
};

// Where the program came from, carried into reports.
struct ProgramInfo {
    std::string name;    // workload name, or the trace file
    std::string params;  // "k=v,..." or "" for a trace
    std::uint64_t seed = 0;
};

// compare(): the observer of config `index`'s run, or nullptr for none (not owned).
using RunObserverFor = std::function<RunObserver*(std::size_t index, const CompareConfig& config)>;

struct CompareOptions {
    unsigned threads = 0;             // 0 = std::thread::hardware_concurrency()
    std::size_t timelinePoints = 0;   // samples per run (0 = none); the last op is always sampled
    bool fragmentationAtPeak = true;  // snapshot the layout whenever reserved sets a new peak
    CostModel cost;
    // runOne only (native backend): also receives every allocator event, in order.
    EventSink* sink = nullptr;
    // runOne only (native backend): run on this device (e.g. a real GPU) instead of a
    // SimulatedDevice built from the CompareDevice. Not owned.
    DeviceMemory* deviceMemory = nullptr;
    // runOne only (native backend): called before (applied = false) and after (true) each op is
    // applied, e.g. to follow the program with a real GPU's streams and events.
    std::function<void(const Op& op, bool applied)> opHook;
    // runOne only (native backend): follows the run as it is measured (not owned).
    RunObserver* observer = nullptr;
    // compare() only: asked once per config, in config order, on the calling thread, before any
    // run starts (so what an observer numbers at construction follows the configs' order, not
    // the threads' timing); each native run is then followed by its config's observer.
    RunObserverFor observerFor;
};

class ComparisonEngine {
public:
    static std::vector<RunMetrics> compare(const Program& program, const std::vector<CompareConfig>& configs,
                                           const CompareDevice& device, const CompareOptions& options = {});
    static RunMetrics runOne(const Program& program, const CompareConfig& config, const CompareDevice& device,
                             const CompareOptions& options = {});
};

}  // namespace allocscope::alloc
