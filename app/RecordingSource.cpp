#include "app/RecordingSource.h"

#include <QDateTime>
#include <QFileInfo>
#include <QObject>

#include <map>
#include <mutex>
#include <string>
#include <tuple>

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
};
using FileKey = std::tuple<QString, qint64, qint64>;
std::mutex cacheMutex;
std::map<FileKey, std::map<qint64, DeviceFacts>> cache;

std::optional<std::map<qint64, DeviceFacts>> factsOf(const QString& path) {
    const QFileInfo info(path);
    if (!info.isFile() || !info.isReadable()) return std::nullopt;
    const FileKey key{info.absoluteFilePath(), info.size(), info.lastModified().toMSecsSinceEpoch()};
    {
        const std::lock_guard<std::mutex> lock(cacheMutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    std::map<qint64, DeviceFacts> facts;
    try {
        const storage::TraceFile file = storage::TraceFile::read(path.toStdString());
        for (const alloc::RecordedTrace& t : file.traces)
            facts[t.device] = DeviceFacts{static_cast<qint64>(t.entries.size()), t.settings, t.origin};
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
    const QString config = !hasRecordedSettings ? QObject::tr("none recorded (PyTorch's defaults)")
                           : recordedConfig.isEmpty() ? QObject::tr("default")
                                                      : recordedConfig;
    return QObject::tr("%1\n%2 trace entries, %3\nrecorded config: %4\nrun %5 replayed it on %6 (%7), memory fraction %8")
        .arg(fileName, views::Formatting::count(traceEntries), origin, config, QString::number(run), gpu,
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
        const std::optional<std::map<qint64, DeviceFacts>> facts = factsOf(r->path);
        if (!facts) continue;
        const auto device = facts->find(r->device);
        if (device == facts->end()) continue;
        r->traceEntries = device->second.entries;
        r->origin = QString::fromStdString(device->second.origin);
        r->hasRecordedSettings = device->second.settings.has_value();
        r->recordedConfig = QString::fromStdString(device->second.settings.value_or(std::string()));
        if (facts->size() > 1) r->fileName += QObject::tr(" device %1").arg(r->device);
        out.insert(row.number, *r);
    }
    return out;
}

}  // namespace allocscope::app
