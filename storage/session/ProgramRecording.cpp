#include "storage/session/ProgramRecording.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/replay/LimitInference.h"
#include "allocator/replay/ReplayVerdict.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/formats/FormatError.h"
#include "storage/import/RankRule.h"
#include "storage/import/TraceFile.h"
#include "storage/session/PhaseTracker.h"
#include "storage/session/RecordingObserver.h"
#include "storage/session/SessionRecorder.h"

namespace allocscope::storage {
namespace {

constexpr std::uint64_t kProgressOps = 4096;
constexpr std::uint64_t kProgressEvents = 4096;

// Thrown from the import's sink when the progress callback asks to stop: it unwinds the replay.
struct ImportCancelled {};

// Between the replay and the recorder (and the caller's own sink, if any): counts events for the
// progress callback, and places the replay's phase marks between events as they come. A phase op
// has no events of its own: its mark goes before the first event of a later op, so it waits
// until that event (or the end of the run) arrives; the phases it closes go to the recorder then.
class ImportSink final : public alloc::EventSink {
public:
    ImportSink(SessionRecorder& recorder, alloc::EventSink* also, const RecordProgress& progress, std::uint64_t entries)
        : recorder_(recorder),
          also_(also),
          progress_(progress),
          entries_(entries),
          phases_([&recorder](PhaseSpan&& span) { recorder.addPhase(std::move(span)); }) {}

    // A phase mark the replay applied at op `opIndex` (before the events of any later op).
    void onPhase(std::uint64_t opIndex, const std::string& name, bool begin) {
        waiting_.push_back(WaitingMark{opIndex, name, begin});
    }

    void onEvent(const alloc::Event& event) override {
        placeMarksBefore(event.opIndex);
        recorder_.onEvent(event);
        if (also_ != nullptr) also_->onEvent(event);
        ++count_;
        if (progress_ && count_ % kProgressEvents == 0 && !progress_(std::min(count_, entries_), entries_)) {
            throw ImportCancelled{};
        }
    }

    // The run ended after `opCount` ops: the marks still waiting go after every event, and the
    // phases still open close at the end.
    void finishPhases(std::uint64_t opCount) {
        placeMarksBefore(std::numeric_limits<std::uint64_t>::max());
        phases_.finish(count_, opCount == 0 ? 0 : opCount - 1);
    }

private:
    struct WaitingMark {
        std::uint64_t opIndex = 0;
        std::string name;
        bool begin = true;
    };
    // The marks of ops before `opIndex` go before the event about to be counted.
    void placeMarksBefore(std::uint64_t opIndex) {
        while (!waiting_.empty() && waiting_.front().opIndex < opIndex) {
            const WaitingMark& mark = waiting_.front();
            phases_.mark(mark.name, mark.begin, mark.opIndex, count_);
            waiting_.pop_front();
        }
    }

    SessionRecorder& recorder_;
    alloc::EventSink* also_;
    const RecordProgress& progress_;
    std::uint64_t entries_;
    std::uint64_t count_ = 0;
    PhaseTracker phases_;
    std::deque<WaitingMark> waiting_;  // marks with no event of a later op yet: a few at a time
};

std::string divergenceText(const alloc::ReplayResult& result) {
    std::ostringstream out;
    if (result.divergence) {
        out << "op " << result.divergence->opIndex << " (trace entry " << result.divergence->entryIndex
            << "): " << result.divergence->what;
    }
    if (result.unexpectedOomOp) {
        if (out.tellp() > 0) out << "; ";
        out << "an allocation failed at op " << *result.unexpectedOomOp << " that succeeded in the recording";
    }
    if (result.layoutDifference) {
        if (out.tellp() > 0) out << "; ";
        out << "final layout: " << *result.layoutDifference;
    }
    return out.str();
}

// Did the replay compare itself with a recording, and what came out? TraceReplayer's rule: it
// compares with options.expected when given; otherwise a replay with recorded placement (no
// placement model: a trace under its own settings) compares with the replayed trace itself, and a
// what-if (a placement model, no expected recording) compares with nothing.
RunVerdict verdictOf(const alloc::ReplayResult& result, const alloc::RecordedTrace& trace, const alloc::ReplayOptions& options) {
    const bool compared = options.expected != nullptr || options.placement == nullptr;
    if (!compared) {
        // How firm the prediction is (AddressTies.h) goes with it, on lines of their own: the run
        // list shows the text as a plain tooltip, which Qt does not wrap.
        // Built by appending: g++ 12 at -O3 reports a false -Wrestrict for replace() and for
        // "literal" + std::string here.
        const std::string ties = result.addressTies.describe();
        std::string text = "what-if (not compared): the recording ran under another config\n";
        const std::size_t first = ties.find("; the first at ");
        text.append(ties, 0, first);
        if (first != std::string::npos) {
            text += '\n';
            text.append(ties, first + 2, std::string::npos);
        }
        return {VerdictKind::WhatIf, std::move(text), std::nullopt};
    }
    const std::size_t entries = (options.expected != nullptr ? options.expected : &trace)->entries.size();
    RunVerdict verdict;
    verdict.kind = result.exact() ? VerdictKind::Exact : VerdictKind::Diverged;
    verdict.text = alloc::replayVerdict(result, entries);
    if (const std::optional<std::size_t> entry = alloc::replayVerdictEntry(result, entries)) verdict.entry = *entry;
    return verdict;
}

struct ResolvedGpu {
    std::string name;
    std::uint64_t total = 0;
    std::uint64_t other = 0;
};

ResolvedGpu resolveGpu(const ImportTarget& target) {
    const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(target.gpuName);
    ResolvedGpu gpu{target.gpuName, target.totalMemory, target.otherMemory};
    if (gpu.total == 0) {
        if (!preset) throw std::invalid_argument("unknown GPU preset '" + target.gpuName + "' (see `allocscope-cli gpus`)");
        gpu.total = preset->totalMemory;
    }
    if (gpu.other == 0) {
        // A custom size keeps the default card's CUDA context, as the CLI's --total-memory does.
        gpu.other = preset ? preset->contextMemory : alloc::findGpuPreset(alloc::kDefaultGpuPreset)->contextMemory;
    }
    return gpu;
}

}  // namespace

void checkMemoryFraction(const std::optional<double>& fraction) {
    if (fraction && !(*fraction >= 0.0 && *fraction <= 1.0)) {
        throw std::invalid_argument("invalid memory fraction " + std::to_string(*fraction) + ": it must be within [0, 1]");
    }
}

RecordedRun recordProgram(SessionWriter& writer, const alloc::Program& program, const alloc::StackTable* stacks,
                          const RecordTarget& target, const RecordProgress& progress) {
    // The observer judges the target and creates the run; this loop only drives the allocator.
    RecordingObserver observer(writer, program, stacks, target);
    alloc::SimulatedDevice device(observer.totalMemory(), target.otherMemory, target.info.gpu);
    alloc::CachingAllocator allocator(target.config, device, &observer);
    if (target.memoryFraction) allocator.setMemoryFraction(*target.memoryFraction);

    RecordedRun run;
    run.runNumber = observer.runNumber();
    alloc::ProgramRunner runner(allocator);
    const std::uint64_t count = program.ops.size();
    for (std::uint64_t i = 0; i < count; ++i) {
        const alloc::Op& op = program.ops[i];
        observer.beforeOp(op, i);
        if (!runner.apply(op, i, run.result)) break;
        observer.afterOp(op, i, allocator);
        if (progress && (i + 1) % kProgressOps == 0 && i + 1 < count && !progress(i + 1, count)) {
            run.cancelled = true;
            break;
        }
    }
    if (run.cancelled) {
        observer.interrupt();
    } else {
        observer.finish(allocator, run.result);
        if (progress) progress(count, count);
    }
    run.stats = allocator.stats();
    return run;
}

PreparedImport prepareImport(const std::string& file, const ImportTarget& target) { return prepareImport(file, target, {}); }

PreparedImport prepareImport(const std::string& file, const ImportTarget& target, const ReadProgress& progress) {
    checkMemoryFraction(target.memoryFraction);
    const ResolvedGpu gpu = resolveGpu(target);
    PreparedImport prepared;
    prepared.file = file;
    prepared.gpuName = gpu.name;
    prepared.totalMemory = gpu.total;
    prepared.otherMemory = gpu.other;
    prepared.memoryFraction = target.memoryFraction;
    std::vector<std::string> metadata;
    try {
        TraceFile loaded = TraceFile::load(file, target.streaming, progress);
        prepared.traces = std::move(loaded.traces);
        metadata = std::move(loaded.userMetadata);
    } catch (const formats::FormatError& e) {
        throw formats::FormatError(e.problem(), formats::FormatError::inFile(file, e.location()));
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        throw std::runtime_error(std::string(e.what()) + " (" + file + ")");
    }
    if (prepared.traces.empty()) throw std::runtime_error("the trace holds no allocator events and no segments (" + file + ")");
    for (const alloc::RecordedTrace& trace : prepared.traces) {
        const alloc::ParseResult parsed = alloc::parseConfig(trace.settings.value_or(""));
        if (!parsed.accepted()) {
            throw std::runtime_error("the recorded allocator settings are not valid: " +
                                     (parsed.pytorchMessage.empty() ? std::string(alloc::verdictName(parsed.verdict)) : parsed.pytorchMessage) +
                                     " (" + file + ": allocator_settings.PYTORCH_CUDA_ALLOC_CONF)");
        }
        if (parsed.config.backend == alloc::Backend::CudaMallocAsync) {
            throw std::runtime_error("backend:cudaMallocAsync keeps no segments to replay into (" + file + ")");
        }
        prepared.configs.push_back(parsed.config);
        if (target.inferLimit) {
            alloc::ReplayOptions base;
            base.config = parsed.config;
            prepared.limits.push_back(alloc::LimitInference::infer(
                trace, base, alloc::LimitDevice{gpu.name, gpu.total, gpu.other, target.memoryFraction}));
        }
    }
    if (const std::optional<FoundRank> rank = RankRule::find(file, metadata)) {
        prepared.rank = RunRank{rank->rank, rank->fromMetadata ? "user_metadata" : "file name"};
    }
    return prepared;
}

std::vector<ImportedRun> importTraceFile(SessionWriter& writer, const std::string& file, const ImportTarget& target,
                                         const RecordProgress& progress) {
    std::error_code ec;
    if (std::filesystem::exists(file, ec) && std::filesystem::equivalent(file, writer.path(), ec)) {
        throw std::invalid_argument("the trace and the session are the same file (" + file + ")");
    }
    if (!progress) return recordImport(writer, prepareImport(file, target), progress);
    // A streamed read reports its bytes as the first 40% (about its share of the time), the
    // replay the rest; a file read whole reports only its replay.
    constexpr std::uint64_t kWhole = 1000, kRead = 400;
    bool streamed = false;
    const ReadProgress read = [&](std::uint64_t done, std::uint64_t total) {
        streamed = true;
        if (!progress(total ? done * kRead / total : 0, kWhole)) throw ImportCancelled{};
    };
    PreparedImport prepared;
    try {
        prepared = prepareImport(file, target, read);
    } catch (const ImportCancelled&) {
        return {};
    }
    const std::uint64_t from = streamed ? kRead : 0;
    return recordImport(writer, prepared, [&](std::uint64_t done, std::uint64_t total) {
        return progress(from + (total ? done * (kWhole - from) / total : kWhole - from), kWhole);
    });
}

namespace {

void refuseSameFile(const SessionWriter& writer, const PreparedImport& prepared) {
    std::error_code ec;
    if (std::filesystem::exists(prepared.file, ec) && std::filesystem::equivalent(prepared.file, writer.path(), ec)) {
        throw std::invalid_argument("the trace and the session are the same file (" + prepared.file + ")");
    }
    if (prepared.configs.size() != prepared.traces.size()) {
        throw std::invalid_argument("recordImport: the import was not prepared by prepareImport");
    }
}

RunInfo importRunInfo(const PreparedImport& prepared, std::size_t t) {
    const alloc::RecordedTrace& trace = prepared.traces[t];
    RunInfo info;
    info.name = std::filesystem::path(prepared.file).filename().string() +
                (prepared.traces.size() > 1 ? " device " + std::to_string(trace.device) : std::string());
    if (prepared.rank && prepared.rank->source != "file name") info.name += " · rank " + std::to_string(prepared.rank->rank);
    info.sourceKind = trace.hasSegmentEvents ? "snapshot" : "csv";
    info.source = prepared.file + " (" + trace.origin + ")";
    info.config = trace.settings.value_or("");
    info.gpu = prepared.gpuName;
    info.totalMemory = prepared.totalMemory;
    info.memoryFraction = prepared.memoryFraction.value_or(1.0);
    if (!prepared.limits.empty()) {
        const alloc::MemoryLimit& limit = prepared.limits[t];
        info.gpu = limit.deviceName;
        info.totalMemory = limit.totalMemory;
        info.memoryFraction = limit.memoryFraction.value_or(1.0);
    }
    return info;
}

alloc::ReplayOptions importOptions(const PreparedImport& prepared, std::size_t t) {
    alloc::ReplayOptions options;
    options.config = prepared.configs[t];
    options.memoryFraction = prepared.memoryFraction;
    options.totalMemory = prepared.totalMemory;
    options.otherMemory = prepared.otherMemory;
    if (!prepared.limits.empty()) alloc::LimitInference::apply(prepared.limits[t], options);
    options.continueAfterOom = true;
    options.keepOps = false;  // only the phase ops are recorded from the program
    return options;
}

std::uint64_t totalEntries(const PreparedImport& prepared) {
    std::uint64_t total = 0;
    for (const alloc::RecordedTrace& trace : prepared.traces) total += trace.entries.size();
    return total;
}

// Replays device t into its run, reporting progress over the whole file.
ImportedRun replayDevice(SessionRecorder& recorder, const PreparedImport& prepared, std::size_t t, std::uint64_t doneBefore,
                         const RecordProgress& progress) {
    RecordProgress deviceProgress;
    if (progress) {
        deviceProgress = [&progress, doneBefore, total = totalEntries(prepared)](std::uint64_t done, std::uint64_t) {
            return progress(doneBefore + done, total);
        };
    }
    recorder.setRank(prepared.rank);
    RecordedReplay replayed = recordReplayInto(recorder, prepared.traces[t], importOptions(prepared, t), std::nullopt, deviceProgress);
    return ImportedRun{replayed.runNumber, std::move(replayed.divergence), replayed.cancelled,
                       prepared.limits.empty() ? std::string() : prepared.limits[t].describe()};
}

}  // namespace

std::vector<ImportedRun> recordImport(SessionWriter& writer, const PreparedImport& prepared, const RecordProgress& progress) {
    refuseSameFile(writer, prepared);
    // One device after the other, each run created when its replay starts: after a cancel no
    // further device is imported.
    std::uint64_t doneBefore = 0;
    std::vector<ImportedRun> runs;
    for (std::size_t t = 0; t < prepared.traces.size(); ++t) {
        const std::unique_ptr<SessionRecorder> recorder = createReplayRun(writer, importOptions(prepared, t), importRunInfo(prepared, t));
        runs.push_back(replayDevice(*recorder, prepared, t, doneBefore, progress));
        if (runs.back().cancelled) break;
        doneBefore += prepared.traces[t].entries.size();
    }
    const std::uint64_t total = totalEntries(prepared);
    if (progress && !runs.empty() && !runs.back().cancelled) progress(total, total);
    return runs;
}

std::vector<std::unique_ptr<SessionRecorder>> createImportRuns(SessionWriter& writer, const PreparedImport& prepared) {
    refuseSameFile(writer, prepared);
    std::vector<std::unique_ptr<SessionRecorder>> runs;
    for (std::size_t t = 0; t < prepared.traces.size(); ++t) {
        // Queued, not waited for: the caller's next file may queue its runs at once.
        RecorderOptions queued;
        queued.waitForRun = false;
        runs.push_back(createReplayRun(writer, importOptions(prepared, t), importRunInfo(prepared, t), queued));
    }
    return runs;
}

std::vector<ImportedRun> replayImportRuns(std::vector<std::unique_ptr<SessionRecorder>>& runs, const PreparedImport& prepared,
                                          const RecordProgress& progress) {
    if (runs.size() != prepared.traces.size()) throw std::invalid_argument("replayImportRuns: the runs were not created by createImportRuns");
    std::uint64_t doneBefore = 0;
    std::vector<ImportedRun> out;
    for (std::size_t t = 0; t < runs.size(); ++t) {
        if (!out.empty() && out.back().cancelled) {
            // Created but never replayed: kept as an empty interrupted run with its rank.
            runs[t]->setRank(prepared.rank);
            runs[t]->interrupt();
            out.push_back(ImportedRun{runs[t]->runNumber(), {}, true});
            continue;
        }
        out.push_back(replayDevice(*runs[t], prepared, t, doneBefore, progress));
        doneBefore += prepared.traces[t].entries.size();
    }
    const std::uint64_t total = totalEntries(prepared);
    if (progress && !out.empty() && !out.back().cancelled) progress(total, total);
    return out;
}

RecordedReplay recordReplay(SessionWriter& writer, const alloc::RecordedTrace& trace, const alloc::ReplayOptions& options,
                            const RunInfo& info, const std::optional<alloc::AllocatorConfig>& whatIfRecordedConfig,
                            const RecordProgress& progress) {
    const std::unique_ptr<SessionRecorder> recorder = createReplayRun(writer, options, info);
    return recordReplayInto(*recorder, trace, options, whatIfRecordedConfig, progress);
}

std::unique_ptr<SessionRecorder> createReplayRun(SessionWriter& writer, const alloc::ReplayOptions& options, const RunInfo& info,
                                                 const RecorderOptions& recorder) {
    if (options.config.backend == alloc::Backend::CudaMallocAsync) {
        throw std::invalid_argument("backend:cudaMallocAsync keeps no segments to replay into (run '" + info.name + "')");
    }
    alloc::SimulatedDevice fresh(options.totalMemory, options.otherMemory);
    const alloc::CachingAllocator initial(options.config, fresh);
    return std::make_unique<SessionRecorder>(writer, info, initial.stats(), recorder);
}

RecordedReplay recordReplayInto(SessionRecorder& recorder, const alloc::RecordedTrace& trace, const alloc::ReplayOptions& options,
                                const std::optional<alloc::AllocatorConfig>& whatIfRecordedConfig, const RecordProgress& progress) {
    const std::uint64_t entries = trace.entries.size();
    ImportSink sink(recorder, options.sink, progress, entries);
    alloc::ReplayOptions recorded = options;
    recorded.sink = &sink;
    recorded.onPhase = [&sink, &options](std::uint64_t opIndex, const std::string& name, bool begin) {
        sink.onPhase(opIndex, name, begin);
        if (options.onPhase) options.onPhase(opIndex, name, begin);
    };
    // Stats after every step, so retries and syncs (which no event shows) are exact at every
    // event, as in a recorded program; the caller's own callback still runs.
    recorded.afterStep = [&recorder, &options](const alloc::DeviceStats& stats) {
        recorder.syncStats(stats);
        if (options.afterStep) options.afterStep(stats);
    };
    RecordedReplay out;
    try {
        out.result = whatIfRecordedConfig ? alloc::TraceReplayer::replayWhatIf(trace, *whatIfRecordedConfig, recorded)
                                          : alloc::TraceReplayer::replay(trace, recorded);
    } catch (const ImportCancelled&) {
        out.cancelled = true;
        recorder.interrupt(&trace.stacks);
        out.runNumber = recorder.runNumber();  // after the commit: asking earlier could wait for it
        return out;
    }
    // The final stats once more, whatever changed after the last step (phase marks only today).
    recorder.syncStats(out.result.stats, true);
    if (const std::optional<alloc::HistoryTruncation>& t = out.result.truncation) {
        // The restored state's events reached the recorder first: the history starts after them.
        recorder.setHistoryStart(HistoryStart{t->restoredEvents, t->blocks, t->bytes, t->noHistory});
    }
    sink.finishPhases(out.result.opCount);
    out.divergence = divergenceText(out.result);
    recorder.setVerdict(verdictOf(out.result, trace, options));
    recorder.finish(&trace.stacks, out.divergence);
    out.runNumber = recorder.runNumber();
    if (progress) progress(entries, entries);
    return out;
}

}  // namespace allocscope::storage
