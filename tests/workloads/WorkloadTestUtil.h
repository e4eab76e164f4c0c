#pragma once
// Helpers shared by the workload suites: reading the shared traces' CSV and JSON ground truth,
// and running a program on a simulated H100.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/core/Op.h"
#include "allocator/workloads/WorkloadRegistry.h"

namespace wltest {

inline QString dataPath(const QString& file) {
    return QString::fromLocal8Bit(qgetenv("ALLOCSCOPE_TEST_DATA")) + "/traces/" + file;
}

// The RMM CSV of a shared trace as a Program: allocate -> Alloc (its own id), free -> Free.
inline allocscope::alloc::Program csvProgram(const QString& file) {
    allocscope::alloc::Program program;
    QFile f(dataPath(file));
    if (!f.open(QIODevice::ReadOnly)) return program;
    std::map<QString, std::uint64_t> live;
    std::uint64_t next = 1;
    f.readLine();  // header
    while (!f.atEnd()) {
        const QStringList cols = QString::fromUtf8(f.readLine()).trimmed().split(',');
        if (cols.size() < 6) continue;
        if (cols[2] == "allocate") {
            live[cols[3]] = next;
            program.ops.push_back(allocscope::alloc::Op::alloc(next++, cols[4].toULongLong(), cols[5].toULongLong()));
        } else if (cols[2] == "free") {
            program.ops.push_back(allocscope::alloc::Op::free(live[cols[3]]));
            live.erase(cols[3]);
        }
    }
    return program;
}

inline QJsonObject groundTruth(const QString& file) {
    QFile f(dataPath(file));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

inline allocscope::alloc::GeneratedProgram generate(const std::string& name,
                                                     const std::vector<std::pair<std::string, std::string>>& params = {},
                                                     std::uint64_t seed = 1) {
    const auto& w = allocscope::alloc::WorkloadRegistry::instance().get(name);
    return w.generate(w.resolve(params), seed);
}

inline allocscope::alloc::CompareConfig config(const std::string& text) {
    return {text.empty() ? "default" : text, allocscope::alloc::parseConfig(text).config};
}

inline allocscope::alloc::CompareDevice h100() { return allocscope::alloc::CompareDevice{}; }

// The five shared configs of the traces, by trace suffix.
inline const std::vector<std::pair<std::string, std::string>>& sharedConfigs() {
    static const std::vector<std::pair<std::string, std::string>> c = {
        {"default", ""},
        {"expandable", "expandable_segments:True"},
        {"msplit128", "max_split_size_mb:128"},
        {"gc06_msplit256", "garbage_collection_threshold:0.6,max_split_size_mb:256"},
        {"rup4", "roundup_power2_divisions:4"},
    };
    return c;
}

}  // namespace wltest
