#include "app/gui/RecordingSource.h"

#include <QDateTime>
#include <QFileInfo>
#include <QObject>

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/replay/LimitInference.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"
#include "views/util/Formatting.h"

namespace allocscope::app {
namespace {

// What a trace file holds per device, cached by (path, size, mtime): selecting runs of the same
// recording must not read a large snapshot again.
struct DeviceFacts {
    qint64 entries = 0;
    std::optional<std::string> settings;
    std::string origin;
    std::optional<alloc::MemoryLimit> limit;  // a recorded OOM's (LimitInference on the import's preset)
};

// The limit the app's import inferred for `trace` (MultiImport: inferLimit on the default
// preset), inferred again the same way. Inferred here rather than carried from the import: the
// session stores no MemoryLimit, and a session opened later must say the same. The bisection
// replays the trace a few times, once per file (cached with its facts), on the catalog's thread.
std::optional<alloc::MemoryLimit> importLimitOf(const alloc::RecordedTrace& trace) {
    const alloc::ParseResult parsed = alloc::parseConfig(trace.settings.value_or(""));
    if (!parsed.accepted() || parsed.config.backend == alloc::Backend::CudaMallocAsync) return std::nullopt;  // the import refused it
    const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(alloc::kDefaultGpuPreset);
    if (!preset) return std::nullopt;
    alloc::ReplayOptions base;
    base.config = parsed.config;
    alloc::MemoryLimit limit = alloc::LimitInference::infer(
        trace, base, alloc::LimitDevice{preset->name, preset->totalMemory, preset->contextMemory, std::nullopt});
    if (limit.source == alloc::MemoryLimit::Source::Preset) return std::nullopt;  // no OOM: the preset, nothing to say
    return limit;
}
using FileKey = std::tuple<QString, qint64, qint64>;
std::mutex cacheMutex;
std::map<FileKey, std::map<qint64, DeviceFacts>> cache;

// `info`: a readable file (RecordingCatalog::collect checked it).
std::optional<std::map<qint64, DeviceFacts>> factsOf(const QFileInfo& info) {
    const QString path = info.filePath();
    const FileKey key{info.absoluteFilePath(), info.size(), info.lastModified().toMSecsSinceEpoch()};
    {
        const std::lock_guard<std::mutex> lock(cacheMutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    std::map<qint64, DeviceFacts> facts;
    try {
        const storage::TraceFile file = storage::TraceFile::read(path.toStdString());
        for (const alloc::RecordedTrace& t : file.traces)
            facts[t.device] = DeviceFacts{static_cast<qint64>(t.entries.size()), t.settings, t.origin, importLimitOf(t)};
    } catch (const formats::FormatError&) {
        return std::nullopt;  // not readable as a trace (any more): nothing to offer
    }
    const std::lock_guard<std::mutex> lock(cacheMutex);
    cache[key] = facts;
    return facts;
}

}  // namespace

QString RecordingSource::runName(const QString& configText) const {
    return QStringLiteral("%1 · %2").arg(fileName, configText.isEmpty() ? QStringLiteral("default") : configText);
}

QString RecordingSource::description() const {
    const QString entries = traceEntries >= 0 ? QObject::tr("%1 trace entries").arg(views::Formatting::count(traceEntries))
                                              : QObject::tr("trace entries not counted (large file)");
    QString config = !hasRecordedSettings ? QObject::tr("none recorded (PyTorch's defaults)")
                     : recordedConfig.isEmpty() ? QObject::tr("default")
                                                : recordedConfig;
    if (traceEntries < 0) config += QObject::tr(" (as the import replayed it)");
    return QObject::tr("%1\n%2, %3\nrecorded config: %4\nrun %5 replayed it on %6 (%7), memory fraction %8")
        .arg(fileName, entries, origin, config, QString::number(run), gpu,
             views::Formatting::bytes(static_cast<qint64>(totalMemory)))
        .arg(memoryFraction);
}

std::optional<RecordingSource> RecordingCatalog::parseSource(const storage::RunRow& row) {
    if (row.info.sourceKind != "snapshot" && row.info.sourceKind != "csv") return std::nullopt;
    RecordingSource r;
    QString source = QString::fromStdString(row.info.source);
    r.origin = row.info.sourceKind == "csv" ? QStringLiteral("RMM CSV") : QStringLiteral("snapshot device 0");
    if (source.endsWith(QLatin1Char(')'))) {
        const qsizetype open = source.lastIndexOf(QStringLiteral(" ("));
        if (open > 0) {
            const QString origin = source.mid(open + 2, source.size() - open - 3);
            if (origin == QLatin1String("RMM CSV") || origin.startsWith(QLatin1String("snapshot device "))) {
                r.origin = origin;
                if (origin.startsWith(QLatin1String("snapshot device "))) r.device = origin.mid(16).toLongLong();
                source = source.left(open);
            }
        }
    }
    r.path = source;
    r.fileName = QFileInfo(source).fileName();
    r.sourceKind = QString::fromStdString(row.info.sourceKind);
    r.gpu = QString::fromStdString(row.info.gpu);
    r.totalMemory = row.info.totalMemory;
    r.memoryFraction = row.info.memoryFraction;
    r.run = row.number;
    return r;
}

bool RecordingCatalog::mayBeReplay(const views::RunListData& runs, int number) {
    for (const views::RunListRow& row : runs) {
        if (row.number == number) return row.source.startsWith(QLatin1String("snapshot")) || row.source.startsWith(QLatin1String("csv"));
    }
    return false;
}

RecordingSources RecordingCatalog::collect(const std::vector<storage::RunRow>& runs) {
    RecordingSources out;
    for (const storage::RunRow& row : runs) {
        std::optional<RecordingSource> r = parseSource(row);
        if (!r) continue;
        const QFileInfo file(r->path);
        if (!file.isFile() || !file.isReadable()) continue;
        if (static_cast<std::uint64_t>(file.size()) >= kCountFilesBelow) {
            // A big snapshot is not read again just to count its entries: right after its import
            // that would cost as much as the import (seconds, hundreds of MB) while the first view
            // is being drawn. The run itself says which config the recording was replayed under.
            r->recordedConfig = QString::fromStdString(row.info.config);
            r->hasRecordedSettings = r->sourceKind == QLatin1String("snapshot");
            out.insert(row.number, *r);
            continue;
        }
        const std::optional<std::map<qint64, DeviceFacts>> facts = factsOf(file);
        if (!facts) continue;
        const auto device = facts->find(r->device);
        if (device == facts->end()) continue;
        r->traceEntries = device->second.entries;
        r->origin = QString::fromStdString(device->second.origin);
        r->hasRecordedSettings = device->second.settings.has_value();
        r->recordedConfig = QString::fromStdString(device->second.settings.value_or(std::string()));
        // Only a run that replayed on the inferred device says the limit was inferred; a what-if
        // run on another GPU, or a CLI import given --gpu, replayed at the limit it was given.
        if (const std::optional<alloc::MemoryLimit>& limit = device->second.limit;
            limit && row.info.gpu == limit->deviceName && row.info.totalMemory == limit->totalMemory &&
            row.info.memoryFraction == limit->memoryFraction.value_or(1.0)) {
            r->limit = limit;
        }
        if (facts->size() > 1) r->fileName += QObject::tr(" device %1").arg(r->device);
        out.insert(row.number, *r);
    }
    return out;
}

}  // namespace allocscope::app
