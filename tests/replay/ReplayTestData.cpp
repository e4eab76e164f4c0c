#include "ReplayTestData.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include "allocator/config/ConfigParser.h"

namespace replaytest {

QString tracesDir() { return QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/traces"; }

QString fieldSnapshot(const QString& name) {
    QStringList dirs;
    const QString given = QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_FIELD_SNAPSHOTS"));
    if (!given.isEmpty()) dirs << given;
    dirs << QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_SOURCE_DIR")) + "/../shared/field-snapshots";
    for (const QString& dir : dirs) {
        const QString path = dir + "/" + name;
        if (QFile::exists(path)) return path;
    }
    return {};
}

QStringList traceNames() {
    QStringList names;
    const QStringList files = QDir(tracesDir()).entryList({"*.pickle"}, QDir::Files, QDir::Name);
    for (const QString& f : files) names << f.chopped(QStringLiteral(".pickle").size());
    return names;
}

GroundTruth loadGroundTruth(const QString& name, const QString& dir) {
    GroundTruth truth;
    truth.name = name;
    QFile file((dir.isEmpty() ? tracesDir() : dir) + "/" + name + ".json");
    if (!file.open(QIODevice::ReadOnly)) return truth;
    const QJsonObject o = QJsonDocument::fromJson(file.readAll()).object();
    truth.conf = o.value("PYTORCH_CUDA_ALLOC_CONF").toString().toStdString();
    if (o.value("memory_fraction").isDouble()) truth.fraction = o.value("memory_fraction").toDouble();
    truth.totalMemory = static_cast<std::uint64_t>(o.value("total_memory").toDouble());
    const QJsonObject stats = o.value("memory_stats").toObject();
    for (auto it = stats.begin(); it != stats.end(); ++it) {
        truth.stats[it.key().toStdString()] = static_cast<std::int64_t>(it.value().toDouble());
    }
    truth.summary = o.value("summary").toString().toStdString();
    truth.loaded = !truth.stats.empty();
    return truth;
}

allocscope::alloc::ReplayOptions optionsFor(const GroundTruth& truth) {
    allocscope::alloc::ReplayOptions options;
    options.config = allocscope::alloc::parseConfig(truth.conf).config;
    options.memoryFraction = truth.fraction;
    options.totalMemory = truth.totalMemory;
    return options;
}

QString diffStats(const std::map<std::string, std::int64_t>& want, const allocscope::alloc::DeviceStats& got) {
    QStringList lines;
    std::map<std::string, std::int64_t> have;
    for (const auto& [key, value] : got.flatten()) have[key] = value;
    for (const auto& [key, value] : want) {
        auto it = have.find(key);
        if (it == have.end()) {
            lines << QString("%1: missing from the replay").arg(QString::fromStdString(key));
        } else if (it->second != value) {
            lines << QString("%1: PyTorch %2, replay %3").arg(QString::fromStdString(key)).arg(value).arg(it->second);
        }
    }
    for (const auto& [key, value] : have) {
        if (!want.count(key)) lines << QString("%1: not a PyTorch key (%2)").arg(QString::fromStdString(key)).arg(value);
    }
    if (want.size() != 122) lines << QString("ground truth has %1 keys, not 122").arg(want.size());
    return lines.join("\n");
}

QString describeInexact(const allocscope::alloc::ReplayResult& result) {
    QStringList parts;
    if (result.divergence) {
        parts << QString("diverges at op %1 (trace entry %2): %3")
                     .arg(result.divergence->opIndex)
                     .arg(result.divergence->entryIndex)
                     .arg(QString::fromStdString(result.divergence->what));
    }
    if (result.layoutDifference) parts << "final layout: " + QString::fromStdString(*result.layoutDifference);
    if (result.unexpectedOomOp) parts << QString("unexpected OOM at op %1").arg(*result.unexpectedOomOp);
    return parts.join("\n");
}

}  // namespace replaytest
