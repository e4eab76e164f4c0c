#include "app/lessons/LessonRunner.h"

#include <exception>
#include <memory>
#include <optional>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/EventSink.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/replay/TraceReplayer.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/lessons/AnchorSink.h"
#include "app/lessons/LessonError.h"
#include "app/lessons/TraceRun.h"
#include "app/lessons/LessonMetrics.h"
#include "app/lessons/VerdictRule.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"

namespace allocscope::app {
namespace {

alloc::RecordedTrace importTrace(const LessonProgram& p) {
    try {
        return std::move(storage::TraceFile::read(p.tracePath).traces.front());
    } catch (const formats::FormatError& e) {
        throw LessonError(e.problem(), e.location());
    }
}

alloc::GpuPreset presetFor(const LessonProgram& p) {
    std::string name = p.gpu;
    if (name.empty() && p.kind == LessonProgram::Kind::Workload) {
        name = alloc::WorkloadRegistry::instance().get(p.workload).defaultGpu();
    }
    if (name.empty()) name = std::string(alloc::kDefaultGpuPreset);
    const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(name);
    if (!preset) throw LessonError("unknown GPU preset '" + name + "'", "program.gpu");
    return *preset;
}

std::uint64_t firstAtOrAfter(const RunAnchors& a, std::uint64_t op) {
    for (std::uint64_t i = op; i < a.opFirstEvent.size(); ++i) {
        if (a.opFirstEvent[i] != RunAnchors::kNone) return a.opFirstEvent[i];
    }
    return a.events == 0 ? RunAnchors::kNone : a.events - 1;
}

std::uint64_t lastAtOrBefore(const RunAnchors& a, std::uint64_t op) {
    for (std::uint64_t i = std::min<std::uint64_t>(op + 1, a.opLastEvent.size()); i-- > 0;) {
        if (a.opLastEvent[i] != RunAnchors::kNone) return a.opLastEvent[i];
    }
    return a.events == 0 ? RunAnchors::kNone : 0;
}

std::optional<std::uint64_t> resolveEvent(const LessonStep& step, const LessonRunResult& run) {
    const RunAnchors& a = run.anchors;
    if (!run.ran || a.events == 0) return std::nullopt;
    std::uint64_t seq = RunAnchors::kNone;
    const std::string& at = step.at;
    if (at == "start") seq = 0;
    if (at == "end") seq = a.events - 1;
    if (at == "peak") seq = lastAtOrBefore(a, run.metrics.peakReservedOp);
    if (at == "oom") seq = a.firstOomEvent != RunAnchors::kNone ? a.firstOomEvent : a.events - 1;
    if (at.rfind("op:", 0) == 0) seq = firstAtOrAfter(a, std::stoull(at.substr(3)));
    if (at.rfind("event:", 0) == 0) seq = std::min<std::uint64_t>(std::stoull(at.substr(6)), a.events - 1);
    if (at.rfind("phase:", 0) == 0) {
        const std::string name = at.substr(6);
        for (std::size_t i = 0; i < run.program.ops.size(); ++i) {
            const alloc::Op& op = run.program.ops[i];
            if (op.kind == alloc::OpKind::Phase && op.begin && op.labelId < run.program.labels.size() &&
                run.program.labels[op.labelId] == name) {
                seq = firstAtOrAfter(a, i);
                break;
            }
        }
    }
    if (seq == RunAnchors::kNone) return std::nullopt;
    return seq;
}

}  // namespace

const char* outcomeName(Outcome outcome) {
    switch (outcome) {
        case Outcome::True: return "true";
        case Outcome::False: return "false";
        case Outcome::Depends: return "depends";
    }
    return "?";
}

Outcome LessonRunner::decide(const Lesson& lesson, const std::vector<LessonRunResult>& runs, std::string& decidedBy) {
    VerdictRule::Names names;
    names.metricKind = LessonMetrics::kind;
    for (const LessonRunResult& r : runs) names.runs.push_back(r.id);
    const VerdictRule::Lookup lookup = [&runs](const std::string& metric, const std::string& id) {
        for (const LessonRunResult& r : runs) {
            if (r.id == id) return LessonMetrics::value(metric, r);
        }
        throw LessonError("no run '" + id + "'", "metric " + metric);
    };
    for (const LessonRule& rule : lesson.rules) {
        const VerdictRule parsed = VerdictRule::parse(rule.when, names, rule.where);
        bool holds = false;
        try {
            holds = parsed.holds(lookup);
        } catch (const LessonError& e) {
            throw LessonError(e.problem(), rule.where + ": " + e.location());
        }
        if (holds) {
            decidedBy = rule.when;
            return rule.outcome;
        }
    }
    decidedBy = "otherwise";
    return lesson.otherwise;
}

LessonResult LessonRunner::run(const Lesson& lesson, const Progress& progress, const std::atomic<bool>* cancel) {
    LessonResult result;
    result.lesson = lesson;
    const LessonProgram& p = lesson.program;
    const alloc::GpuPreset preset = presetFor(p);
    const std::size_t total = lesson.runs.size() + (p.kind == LessonProgram::Kind::Trace ? 1 : 0);
    std::size_t done = 0;
    const auto report = [&](const std::string& what) {
        if (progress) progress(done, total, what);
    };

    alloc::CompareDevice base = alloc::CompareDevice::ofPreset(preset);
    base.memoryFraction = p.memoryFraction;

    std::optional<alloc::RecordedTrace> trace;
    alloc::Program traceProgram;  // the trace's ops, for the async backend's model
    std::vector<std::size_t> emptyCacheSteps;
    if (p.kind == LessonProgram::Kind::Trace) {
        report("reading " + p.trace);
        trace = importTrace(p);
        // The recorded setup (recorded config, the lesson's memory fraction), replayed exactly once
        // to learn the program's explicit empty_cache() calls; every other setup reuses them.
        const TraceRunDevice recordedDevice{base.totalMemory, base.otherMemory, base.memoryFraction};
        TraceRun::run(*trace, TraceRun::recordedConfig(*trace), recordedDevice, std::nullopt, nullptr, traceProgram, &emptyCacheSteps);
        result.trace = std::make_shared<const alloc::RecordedTrace>(*trace);
        result.emptyCacheSteps = emptyCacheSteps;
        ++done;
    }
    for (const LessonRun& spec : lesson.runs) {
        if (cancel != nullptr && cancel->load()) {
            result.cancelled = true;
            return result;
        }
        report("running " + spec.label);
        LessonRunResult run;
        run.id = spec.id;
        run.label = spec.label;
        run.config = spec.config;
        run.gpu = preset.name;
        run.totalMemory = preset.totalMemory;
        run.memoryFraction = spec.memoryFraction ? spec.memoryFraction : p.memoryFraction;
        const alloc::ParseResult parsed = alloc::parseConfig(spec.config);
        run.configVerdict = alloc::verdictName(parsed.verdict);
        run.pytorchMessage = parsed.pytorchMessage;
        run.correctedConfig = parsed.correctedText;
        for (const alloc::ConfigDiagnostic& d : parsed.diagnostics) {
            if (d.severity == alloc::DiagnosticSeverity::Warning) ++run.configWarnings;
        }
        if (parsed.accepted() && p.kind != LessonProgram::Kind::ConfigOnly) {
            if (p.kind == LessonProgram::Kind::Workload) {
                const alloc::Workload& workload = alloc::WorkloadRegistry::instance().get(p.workload);
                std::vector<std::pair<std::string, std::string>> overrides = p.params;
                overrides.insert(overrides.end(), spec.params.begin(), spec.params.end());
                try {
                    const alloc::WorkloadParams params = workload.resolve(overrides);
                    for (const auto& [name, value] : params.values()) run.params.emplace_back(name, value.s);
                    alloc::GeneratedProgram generated = workload.generate(params, p.seed);
                    run.program = std::move(generated.program);
                    run.stacks = std::move(generated.stacks);
                } catch (const alloc::WorkloadError& e) {
                    throw LessonError(e.what(), lesson.file + ": run " + spec.id + " (" + e.where() + ")");
                }
            }
            alloc::CompareDevice device = base;
            device.memoryFraction = run.memoryFraction;
            AnchorSink anchors(run.anchors, run.program.ops.size());
            if (p.kind == LessonProgram::Kind::Trace && parsed.config.backend == alloc::Backend::Native) {
                const TraceRunDevice replayDevice{device.totalMemory, device.otherMemory, device.memoryFraction};
                run.metrics = TraceRun::run(*trace, parsed.config, replayDevice, emptyCacheSteps, &anchors, run.program);
                run.metrics.label = spec.label;
            } else {
                // The async backend has no segments to replay into: its model runs the trace's ops.
                if (p.kind == LessonProgram::Kind::Trace) run.program = traceProgram;
                alloc::CompareOptions options;
                options.sink = &anchors;
                options.timelinePoints = 200;
                run.metrics = alloc::ComparisonEngine::runOne(run.program, {spec.label, parsed.config}, device, options);
            }
            if (run.metrics.error) throw LessonError("the program is invalid: " + *run.metrics.error, lesson.file + ": run " + spec.id);
            run.ran = true;
        }
        result.runs.push_back(std::move(run));
        ++done;
    }
    result.outcome = decide(lesson, result.runs, result.decidedBy);
    for (const LessonStep& step : lesson.steps) {
        LessonStepView view;
        view.text = step.text;
        view.view = step.view;
        for (std::size_t i = 0; i < result.runs.size(); ++i) {
            if (result.runs[i].id == step.run) view.run = i;
        }
        const LessonRunResult& run = result.runs[view.run];
        view.event = resolveEvent(step, run);
        if (step.blockOp && run.ran && *step.blockOp < run.anchors.opAddress.size() && run.anchors.opAddress[*step.blockOp] != 0) {
            view.blockAddress = run.anchors.opAddress[*step.blockOp];
        }
        result.steps.push_back(std::move(view));
    }
    report("done");
    return result;
}

}  // namespace allocscope::app
