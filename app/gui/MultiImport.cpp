#include "app/gui/MultiImport.h"

#include <QDir>
#include <QFileInfo>
#include <QObject>
#include <QRegularExpression>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocator/device/GpuPresets.h"
#include "app/gui/BackgroundJob.h"
#include "storage/session/BatchImport.h"

namespace allocscope::app {
namespace {

// rank2 before rank10: runs of digits compare by value, the rest case-insensitively. Written out
// because QCollator's numeric mode depends on the locale backend (not in the C locale).
bool naturalLess(const QString& a, const QString& b) {
    qsizetype i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (a[i].isDigit() && b[j].isDigit()) {
            qsizetype ei = i, ej = j;
            while (ei < a.size() && a[ei].isDigit()) ++ei;
            while (ej < b.size() && b[ej].isDigit()) ++ej;
            const QString x = a.mid(i, ei - i).remove(QRegularExpression(QStringLiteral("^0+(?=.)")));
            const QString y = b.mid(j, ej - j).remove(QRegularExpression(QStringLiteral("^0+(?=.)")));
            if (x.size() != y.size()) return x.size() < y.size();
            if (x != y) return x < y;
            i = ei;
            j = ej;
            continue;
        }
        const QChar ca = a[i].toCaseFolded(), cb = b[j].toCaseFolded();
        if (ca != cb) return ca < cb;
        ++i;
        ++j;
    }
    if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
    return a < b;  // equal but for case or leading zeros: any fixed order
}

}  // namespace

QStringList MultiImport::tracesInFolder(const QString& folder) {
    const QDir dir(folder);
    QStringList names = dir.entryList({QStringLiteral("*.pickle"), QStringLiteral("*.pkl"), QStringLiteral("*.json"),
                                       QStringLiteral("*.csv")},
                                      QDir::Files | QDir::Readable, QDir::NoSort);
    std::sort(names.begin(), names.end(), [](const QString& a, const QString& b) { return naturalLess(a, b); });
    QStringList paths;
    for (const QString& name : names) paths << dir.absoluteFilePath(name);
    return paths;
}

BackgroundJob* MultiImport::create(storage::SessionWriter* writer, const QStringList& paths, std::function<void(const Outcome&)> done,
                                   QObject* parent) {
    const QString title = paths.size() == 1 ? QObject::tr("Importing %1").arg(QFileInfo(paths.first()).fileName())
                                            : QObject::tr("Importing %1 files").arg(paths.size());
    return new BackgroundJob(
        title,
        [writer, paths, done = std::move(done)](BackgroundJob& self) {
            std::vector<std::string> files;
            for (const QString& path : paths) files.push_back(path.toStdString());
            storage::BatchImportOptions options;
            options.target.gpuName = std::string(alloc::kDefaultGpuPreset);
            // An OOM snapshot replays under the limit its OOM implies (issue 35), not on 80 GB.
            options.target.inferLimit = true;
            options.progress = [&self](std::uint64_t finished, std::uint64_t total) {
                self.reportProgress(finished, total);
                return !self.isCancelled();
            };
            // SessionError (the session cannot be written) fails the job with its message.
            const std::vector<storage::BatchFileResult> results =
                storage::BatchImport::run([writer]() -> storage::SessionWriter& { return *writer; }, files, options);
            writer->flush();
            Outcome outcome;
            outcome.files = static_cast<int>(results.size());
            for (const storage::BatchFileResult& result : results) {
                if (!result.error.empty()) outcome.refused << QString::fromStdString(result.error);
                for (const storage::ImportedRun& run : result.runs) {
                    ++outcome.runs;
                    if (!run.divergence.empty()) {
                        outcome.diverged << QObject::tr("run %1: %2").arg(run.runNumber).arg(QString::fromStdString(run.divergence));
                    }
                }
            }
            if (outcome.runs == 0 && !outcome.refused.isEmpty() && !self.isCancelled()) {
                throw std::runtime_error(outcome.refused.join(QStringLiteral("\n")).toStdString());
            }
            self.deliver([done, outcome] { done(outcome); });
        },
        parent);
}

}  // namespace allocscope::app
