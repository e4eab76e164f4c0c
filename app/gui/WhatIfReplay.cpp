#include "app/gui/WhatIfReplay.h"

#include <QObject>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/replay/ConfigReplay.h"
#include "app/gui/BackgroundJob.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::app {
namespace {

struct SearchCancelled {};

alloc::AllocatorConfig parsedOrThrow(const QString& text) {
    const alloc::ParseResult parsed = alloc::parseConfig(text.toStdString());
    if (!parsed.accepted()) {
        const std::string why = parsed.pytorchMessage.empty() ? alloc::verdictName(parsed.verdict) : parsed.pytorchMessage;
        throw std::runtime_error(QObject::tr("PyTorch would refuse the config '%1': %2").arg(text, QString::fromStdString(why)).toStdString());
    }
    if (parsed.config.backend == alloc::Backend::CudaMallocAsync) {
        throw std::runtime_error(QObject::tr("backend:cudaMallocAsync keeps no segments to replay into (config '%1')").arg(text).toStdString());
    }
    return parsed.config;
}

// The recorded settings, when PyTorch accepts them (otherwise the recording is only a what-if).
std::optional<alloc::AllocatorConfig> recordedConfig(const alloc::RecordedTrace& trace) {
    if (!trace.settings) return std::nullopt;
    const alloc::ParseResult parsed = alloc::parseConfig(*trace.settings);
    return parsed.accepted() ? std::optional<alloc::AllocatorConfig>(parsed.config) : std::nullopt;
}

alloc::ReplayOptions optionsFor(const WhatIfSetup& setup, const alloc::AllocatorConfig& config) {
    alloc::ReplayOptions options;
    options.config = config;
    options.memoryFraction = setup.memoryFraction;
    options.totalMemory = setup.totalMemory;
    options.otherMemory = setup.otherMemory;
    options.continueAfterOom = true;
    options.keepOps = false;  // nothing here runs the program again: a big trace's would be ~50 B an op
    return options;
}

}  // namespace

alloc::RecordedTrace WhatIfReplay::loadTrace(const RecordingSource& recording) {
    storage::TraceFile file;
    try {
        file = storage::TraceFile::read(recording.path.toStdString());
    } catch (const formats::FormatError& e) {
        throw std::runtime_error(QObject::tr("cannot read the recording: %1 (%2)")
                                     .arg(QString::fromStdString(e.problem()), QString::fromStdString(e.location()))
                                     .toStdString());
    }
    for (alloc::RecordedTrace& trace : file.traces) {
        if (trace.device == recording.device) return std::move(trace);
    }
    throw std::runtime_error(QObject::tr("the recording has no device %1 any more (%2)").arg(recording.device).arg(recording.path).toStdString());
}

storage::RecordedReplay WhatIfReplay::record(storage::SessionWriter& writer, const alloc::RecordedTrace& trace,
                                             const WhatIfSetup& setup, const storage::RecordProgress& progress) {
    const alloc::AllocatorConfig config = parsedOrThrow(setup.configText);
    storage::checkMemoryFraction(setup.memoryFraction);
    alloc::ConfigReplay plan(trace, recordedConfig(trace), optionsFor(setup, config));
    storage::RunInfo info;
    info.name = setup.runName().toStdString();  // "FILE · CONFIG"
    info.sourceKind = setup.recording.sourceKind.toStdString();
    info.source = setup.recording.path.toStdString() + " (" + trace.origin + ")";
    info.config = setup.configText.trimmed().toStdString();
    info.gpu = setup.gpuName.toStdString();
    info.totalMemory = setup.totalMemory;
    info.memoryFraction = setup.memoryFraction.value_or(1.0);
    return storage::recordReplay(writer, trace, plan.options(), info, plan.whatIfRecordedConfig(), progress);
}

std::optional<QString> WhatIfReplay::smallestPresetWithoutOom(const alloc::RecordedTrace& trace, const WhatIfSetup& setup,
                                                              const std::function<bool()>& cancelled) {
    const alloc::AllocatorConfig config = parsedOrThrow(setup.configText);
    std::vector<alloc::GpuPreset> presets = alloc::gpuPresets();
    std::sort(presets.begin(), presets.end(), [](const auto& a, const auto& b) { return a.totalMemory < b.totalMemory; });
    for (const alloc::GpuPreset& preset : presets) {
        WhatIfSetup on = setup;
        on.totalMemory = preset.totalMemory;
        on.otherMemory = preset.contextMemory;
        alloc::ConfigReplay plan(trace, recordedConfig(trace), optionsFor(on, config));
        // The replay has no cancel of its own: the step callback stops it.
        plan.options().afterStep = [&cancelled](const alloc::DeviceStats&) {
            if (cancelled()) throw SearchCancelled{};
        };
        try {
            const alloc::ReplayResult result = plan.run();
            if (result.stats.num_ooms == 0 && !result.unexpectedOomOp) return QString::fromStdString(preset.name);
        } catch (const SearchCancelled&) {
            return std::nullopt;
        }
    }
    return QString();
}

BackgroundJob* WhatIfReplay::runJob(storage::SessionWriter& writer, const WhatIfSetup& setup,
                                    std::function<void(int run)> recorded, QObject* parent) {
    return new BackgroundJob(
        QObject::tr("Replaying %1").arg(setup.runName()),
        [&writer, setup, recorded = std::move(recorded)](BackgroundJob& self) {
            const alloc::RecordedTrace trace = loadTrace(setup.recording);
            if (self.isCancelled()) return;
            const storage::RecordedReplay run = record(writer, trace, setup, [&self](std::uint64_t done, std::uint64_t total) {
                self.reportProgress(done, total);
                return !self.isCancelled();
            });
            writer.flush();
            const int number = run.runNumber;
            self.deliver([recorded, number] { recorded(number); });
        },
        parent);
}

}  // namespace allocscope::app
