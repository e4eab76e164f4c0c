#include "app/gui/CompareJob.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/compare/WindowFigures.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "allocator/workloads/WorkloadRegistry.h"
#include "app/gui/CompareRunLoader.h"
#include "app/gui/WhatIfReplay.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"

namespace allocscope::app {
namespace {

struct BuiltProgram {
    alloc::Program program;
    alloc::StackTable stacks;
    bool hasStacks = false;
    std::string sourceKind = "demo";
    std::string source;  // "fragmentation-101 steps=100 seed=1", or the trace's path
    std::string gpuName;
    std::uint64_t totalMemory = 0;
    std::uint64_t otherMemory = 0;
    std::optional<alloc::WindowFigures> window;  // a trace whose history starts mid-run
};

// Bad input, said once: what is wrong and where.
struct JobError {
    QString message;
};

alloc::GpuPreset presetNamed(const std::string& name, const char* where) {
    const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(name);
    if (!preset) throw JobError{QObject::tr("unknown GPU preset '%1' (%2)").arg(QString::fromStdString(name), QString::fromLatin1(where))};
    return *preset;
}

BuiltProgram buildProgram(const CompareRequest& request) {
    BuiltProgram built;
    if (!request.tracePath.isEmpty()) {
        const std::string path = request.tracePath.toStdString();
        const alloc::GpuPreset preset =
            presetNamed(request.gpuPreset.isEmpty() ? std::string(alloc::kDefaultGpuPreset) : request.gpuPreset.toStdString(), "GPU");
        built.gpuName = preset.name;
        built.totalMemory = preset.totalMemory;
        built.otherMemory = preset.contextMemory;
        storage::TraceFile file;
        try {
            file = storage::TraceFile::read(path);
        } catch (const formats::FormatError& e) {
            throw JobError{QObject::tr("%1 (%2)").arg(QString::fromStdString(e.problem()), QString::fromStdString(e.location()))};
        }
        // The trace is replayed once under its recorded settings; the ops it applied are the
        // program every config then runs (the first device of a multi-device snapshot).
        std::optional<alloc::HistoryTruncation> truncation;
        built.program = alloc::programFromTrace(file.traces.front(), {request.memoryFraction, built.totalMemory, built.otherMemory},
                                                truncation);
        if (truncation) built.window.emplace(file.traces.front().entries.size(), *truncation);
        built.sourceKind = file.sourceKind();
        built.source = path;
        return built;
    }
    const std::string name = request.workload.toStdString();
    const alloc::Workload* workload = alloc::WorkloadRegistry::instance().find(name);
    if (workload == nullptr) {
        throw JobError{QObject::tr("unknown workload '%1' (see the workload list; or give a trace file)").arg(request.workload)};
    }
    std::vector<std::pair<std::string, std::string>> overrides;
    for (auto it = request.params.constBegin(); it != request.params.constEnd(); ++it)
        overrides.emplace_back(it.key().toStdString(), it.value().toString().toStdString());
    try {
        const alloc::WorkloadParams params = workload->resolve(overrides);
        alloc::GeneratedProgram generated = workload->generate(params, request.seed);
        built.program = std::move(generated.program);
        built.stacks = std::move(generated.stacks);
        built.hasStacks = true;
        built.source = workload->name();
        const std::string text = params.text();
        if (!text.empty()) built.source += " " + text;
        if (workload->usesSeed()) built.source += " seed=" + std::to_string(request.seed);
    } catch (const alloc::WorkloadError& e) {
        throw JobError{QObject::tr("%1 (%2)").arg(QString::fromStdString(e.what()), QString::fromStdString(e.where()))};
    }
    const alloc::GpuPreset preset =
        presetNamed(request.gpuPreset.isEmpty() ? workload->defaultGpu() : request.gpuPreset.toStdString(), "GPU");
    built.gpuName = preset.name;
    built.totalMemory = preset.totalMemory;
    built.otherMemory = preset.contextMemory;
    return built;
}

}  // namespace

CompareJob::CompareJob(CompareRequest request, QString sessionPath, storage::SessionWriter* writer, QObject* parent)
    : QObject(parent), request_(std::move(request)), sessionPath_(std::move(sessionPath)), writer_(writer) {
    qRegisterMetaType<allocscope::views::CompareRun>();
}

CompareJob::~CompareJob() {
    cancel();
    if (thread_.joinable()) thread_.join();
}

void CompareJob::start() {
    if (running_.load() || thread_.joinable()) return;
    running_ = true;
    thread_ = std::thread([this] { work(); });
}

void CompareJob::cancel() { cancelled_ = true; }

void CompareJob::work() {
    QString fatal;
    try {
        if (writer_ == nullptr) throw JobError{tr("the session is open read-only: Compare records its runs into the session")};
        if (request_.configs.isEmpty()) throw JobError{tr("no config to compare: add at least one PYTORCH_CUDA_ALLOC_CONF")};
        if (request_.memoryFraction && !(*request_.memoryFraction >= 0.0 && *request_.memoryFraction <= 1.0))
            throw JobError{tr("the memory fraction %1 is not within [0, 1]").arg(*request_.memoryFraction)};
        // Every config is judged before anything runs, as PyTorch would judge it.
        std::vector<alloc::AllocatorConfig> configs;
        QStringList labels;
        for (const auto& [label, text] : request_.configs) {
            const alloc::ParseResult parsed = alloc::parseConfig(text.toStdString());
            if (!parsed.accepted()) {
                const std::string why = parsed.pytorchMessage.empty() ? alloc::verdictName(parsed.verdict) : parsed.pytorchMessage;
                throw JobError{tr("PyTorch would refuse the config '%1': %2").arg(text, QString::fromStdString(why))};
            }
            configs.push_back(parsed.config);
            labels << (label.isEmpty() ? (text.isEmpty() ? QStringLiteral("default") : text) : label);
        }
        if (request_.recording) {
            workRecording(labels);
            running_ = false;
            emit finished(cancelled_.load(), QString());
            return;
        }
        const BuiltProgram built = buildProgram(request_);
        if (cancelled_) throw JobError{QString()};
        QString description = QString::fromStdString(built.source) + tr(" on %1").arg(QString::fromStdString(built.gpuName));
        if (request_.memoryFraction) description += tr(", memory fraction %1").arg(*request_.memoryFraction);
        if (built.window) emit windowFound(QString::fromStdString(built.window->legend()));
        emit prepared(description, static_cast<qint64>(built.program.ops.size()), labels);

        const std::size_t count = configs.size();
        std::atomic<std::size_t> next{0};
        const std::uint64_t totalOps = std::max<std::uint64_t>(1, built.program.ops.size());
        auto worker = [&] {
            for (std::size_t i = next++; i < count; i = next++) {
                if (cancelled_) return;
                const int index = static_cast<int>(i);
                const QString& text = request_.configs[index].second;
                try {
                    if (configs[i].backend == alloc::Backend::CudaMallocAsync) {
                        alloc::CompareDevice device;
                        device.name = built.gpuName;
                        device.totalMemory = built.totalMemory;
                        device.otherMemory = built.otherMemory;
                        device.memoryFraction = request_.memoryFraction;
                        alloc::CompareOptions options;
                        options.timelinePoints = CompareRunLoader::kTimelineBuckets;
                        const alloc::RunMetrics m =
                            alloc::ComparisonEngine::runOne(built.program, {labels[index].toStdString(), configs[i]}, device, options);
                        if (m.error) throw JobError{tr("the program is invalid: %1").arg(QString::fromStdString(*m.error))};
                        views::CompareRun run = CompareRunLoader::fromMetrics(m, labels[index], text);
                        run.windowOnly = built.window.has_value();
                        emit runProgress(index, 1.0);
                        emit runFinished(index, run);
                        continue;
                    }
                    storage::RecordTarget target;
                    target.info.name = labels[index].toStdString();
                    target.info.sourceKind = built.sourceKind;
                    target.info.source = built.source;
                    target.info.config = text.toStdString();
                    target.info.gpu = built.gpuName;
                    target.info.totalMemory = built.totalMemory;
                    target.info.memoryFraction = request_.memoryFraction.value_or(1.0);
                    target.config = configs[i];
                    target.totalMemory = built.totalMemory;
                    target.otherMemory = built.otherMemory;
                    target.memoryFraction = request_.memoryFraction;
                    auto last = std::chrono::steady_clock::now();
                    const storage::RecordProgress progress = [&, index](std::uint64_t done, std::uint64_t) {
                        const auto now = std::chrono::steady_clock::now();
                        if (now - last > std::chrono::milliseconds(50)) {
                            last = now;
                            emit runProgress(index, static_cast<double>(std::min(done, totalOps)) / static_cast<double>(totalOps));
                        }
                        return !cancelled_.load();
                    };
                    const storage::RecordedRun recorded =
                        storage::recordProgram(*writer_, built.program, built.hasStacks ? &built.stacks : nullptr, target, progress);
                    if (recorded.cancelled) return;
                    if (recorded.result.error) {
                        throw JobError{tr("the program is invalid: %1").arg(QString::fromStdString(recorded.result.error->message))};
                    }
                    storage::SessionReader reader(sessionPath_.toStdString(), false);
                    views::CompareRun run = CompareRunLoader::load(reader, recorded.runNumber);
                    // recordProgram stores no history start: the program's own window says it.
                    run.windowOnly = built.window.has_value();
                    emit runProgress(index, 1.0);
                    emit runFinished(index, run);
                } catch (const JobError& e) {
                    emit runFailed(index, e.message);
                } catch (const storage::SessionError& e) {
                    emit runFailed(index, QString::fromStdString(e.what()));
                } catch (const std::exception& e) {
                    emit runFailed(index, QString::fromUtf8(e.what()));
                }
            }
        };
        unsigned threads = threads_ != 0 ? threads_ : std::max(1u, std::thread::hardware_concurrency());
        threads = std::min<unsigned>(threads, static_cast<unsigned>(count));
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
        worker();
        for (std::thread& t : pool) t.join();
    } catch (const JobError& e) {
        fatal = e.message;
    } catch (const std::exception& e) {
        fatal = QString::fromUtf8(e.what());
    }
    running_ = false;
    emit finished(cancelled_.load(), fatal);
}

void CompareJob::workRecording(const QStringList& configLabels) {
    const WhatIfSetup& base = *request_.recording;
    const RecordingSource& recording = base.recording;
    alloc::RecordedTrace trace;
    try {
        trace = WhatIfReplay::loadTrace(recording);
    } catch (const std::exception& e) {
        throw JobError{QString::fromUtf8(e.what())};
    }
    if (cancelled_) throw JobError{QString()};
    QStringList labels = configLabels;
    labels.prepend(tr("recording (%1)").arg(recording.recordedConfig.isEmpty() ? QStringLiteral("default") : recording.recordedConfig));
    {
        // The recording's own run: the baseline every config is told against, on the same op axis.
        storage::SessionReader reader(sessionPath_.toStdString(), false);
        const qint64 ops = static_cast<qint64>(CompareRunLoader::opCount(reader, recording.run));
        QString description = tr("%1 (%2 trace entries) on %3").arg(recording.fileName).arg(trace.entries.size()).arg(base.gpuName);
        if (base.memoryFraction) description += tr(", memory fraction %1").arg(*base.memoryFraction);
        // The recording's run stored where its history starts when the ring buffer overflowed.
        if (const std::optional<storage::HistoryStart> start = reader.run(recording.run).historyStart) {
            alloc::HistoryTruncation truncation;
            truncation.blocks = start->liveBlocks;
            truncation.bytes = start->liveBytes;
            truncation.noHistory = start->noHistory;
            emit windowFound(QString::fromStdString(alloc::WindowFigures(trace.entries.size(), truncation).legend()));
        }
        emit prepared(description, ops, labels);
        views::CompareRun baseline = CompareRunLoader::load(reader, recording.run);
        baseline.label = labels.front();
        baseline.configText = recording.recordedConfig;
        emit runProgress(0, 1.0);
        emit runFinished(0, baseline);
    }
    const std::size_t count = static_cast<std::size_t>(request_.configs.size());
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i = next++; i < count; i = next++) {
            if (cancelled_) return;
            const int index = static_cast<int>(i) + 1;
            WhatIfSetup setup = base;
            setup.configText = request_.configs[static_cast<int>(i)].second;
            try {
                auto last = std::chrono::steady_clock::now();
                const storage::RecordedReplay recorded =
                    WhatIfReplay::record(*writer_, trace, setup, [&, index](std::uint64_t done, std::uint64_t total) {
                        const auto now = std::chrono::steady_clock::now();
                        if (now - last > std::chrono::milliseconds(50) && total > 0) {
                            last = now;
                            // The replay is most of the work; the GPU search after it the rest.
                            emit runProgress(index, 0.5 * static_cast<double>(std::min(done, total)) / static_cast<double>(total));
                        }
                        return !cancelled_.load();
                    });
                if (recorded.cancelled) return;
                storage::SessionReader reader(sessionPath_.toStdString(), false);
                views::CompareRun run = CompareRunLoader::load(reader, recorded.runNumber);
                run.label = labels[index];
                emit runProgress(index, 0.5);
                emit runFinished(index, run);
                const std::optional<QString> preset =
                    WhatIfReplay::smallestPresetWithoutOom(trace, setup, [this] { return cancelled_.load(); });
                if (!preset) return;
                emit runProgress(index, 1.0);
                emit gpuSearched(index, *preset);
            } catch (const storage::SessionError& e) {
                emit runFailed(index, QString::fromStdString(e.what()));
            } catch (const std::exception& e) {
                emit runFailed(index, QString::fromUtf8(e.what()));
            }
        }
    };
    unsigned threads = threads_ != 0 ? threads_ : std::max(1u, std::thread::hardware_concurrency());
    threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max<std::size_t>(count, 1)));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
}

}  // namespace allocscope::app
