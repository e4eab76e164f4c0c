#pragma once
// What running a lesson measured: each run's numbers (or its config's rejection), the verdict
// computed from them, and each step resolved to a run and an event of that run.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/compare/RunMetrics.h"
#include "allocator/core/Op.h"
#include "allocator/core/StackTable.h"
#include "allocator/replay/RecordedTrace.h"
#include "app/lessons/Lesson.h"

namespace allocscope::app {

// Where things happened in one run, by event sequence number (the allocator's Event::seq, which
// is also what a recorded session stores), so steps can put the scrubber there.
struct RunAnchors {
    static constexpr std::uint64_t kNone = ~0ull;
    std::vector<std::uint64_t> opFirstEvent;  // per op: its first event, or kNone
    std::vector<std::uint64_t> opLastEvent;   // per op: its last event, or kNone
    std::vector<std::uint64_t> opAddress;     // per Alloc op: the block's address (0 = none)
    std::uint64_t firstOomEvent = kNone;
    std::uint64_t events = 0;
};

struct LessonRunResult {
    std::string id;
    std::string label;
    std::string config;          // as the lesson wrote it
    // PyTorch's verdict on the config (ConfigParser): "accepted", "abort-at-import", ...
    std::string configVerdict;
    std::string pytorchMessage;  // PyTorch's error text when refused
    std::string correctedConfig;
    std::size_t configWarnings = 0;
    bool ran = false;            // false: config-only lesson, or PyTorch refuses the config
    alloc::RunMetrics metrics;   // valid when ran
    std::string gpu;             // GPU preset name
    std::uint64_t totalMemory = 0;
    std::optional<double> memoryFraction;
    std::vector<std::pair<std::string, std::string>> params;  // workload params in force (text)
    alloc::Program program;      // what ran (kept so the GUI can record exactly this run)
    alloc::StackTable stacks;    // the stacks a workload's Alloc ops name (empty for traces)
    RunAnchors anchors;
};

struct LessonStepView {
    std::string text;
    std::size_t run = 0;                  // index into LessonResult::runs
    std::optional<std::uint64_t> event;   // where the scrubber goes (none: the run has no events)
    std::string view;
    std::optional<std::uint64_t> blockAddress;
};

struct LessonResult {
    Lesson lesson;
    std::vector<LessonRunResult> runs;
    Outcome outcome = Outcome::False;
    std::string decidedBy;  // the rule text that held, or "otherwise"
    std::vector<LessonStepView> steps;
    bool cancelled = false;  // stopped before every run was done: no verdict
    // Trace lessons: the trace and the explicit empty_cache() calls its recorded setup showed, so a
    // run can be replayed again exactly as measured (the GUI records it into a session).
    std::shared_ptr<const alloc::RecordedTrace> trace;
    std::vector<std::size_t> emptyCacheSteps;

    const std::string& verdictText() const { return lesson.text(outcome); }
};

}  // namespace allocscope::app
