#include "app/lessons/LessonMetrics.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "app/lessons/LessonError.h"

namespace allocscope::app {
namespace {

using Getter = std::function<double(const alloc::RunMetrics&)>;

struct Metric {
    const char* label;
    bool bytes;
    Getter get;
};

double d(std::uint64_t v) { return static_cast<double>(v); }

// Fragmentation numbers need the segment layout: the async model has none, and a trace replay
// keeps none at the peak. Not measured is NaN, which value() turns into an error.
double atPeak(const alloc::RunMetrics& m, std::uint64_t alloc::FragmentationMetrics::*field) {
    return m.atPeak ? d((*m.atPeak).*field) : std::nan("");
}
double atEnd(const alloc::RunMetrics& m, std::uint64_t alloc::FragmentationMetrics::*field) {
    return m.atEnd ? d((*m.atEnd).*field) : std::nan("");
}

const std::map<std::string, Metric>& runMetrics() {
    using F = alloc::FragmentationMetrics;
    static const std::map<std::string, Metric> table = {
        {"peakReserved", {"peak reserved", true, [](const alloc::RunMetrics& m) { return d(m.peakReserved); }}},
        {"peakAllocated", {"peak allocated", true, [](const alloc::RunMetrics& m) { return d(m.peakAllocated); }}},
        {"finalReserved", {"reserved at the end", true, [](const alloc::RunMetrics& m) { return d(m.finalReserved); }}},
        {"finalAllocated", {"allocated at the end", true, [](const alloc::RunMetrics& m) { return d(m.finalAllocated); }}},
        {"oom", {"out of memory", false, [](const alloc::RunMetrics& m) { return m.oom() ? 1.0 : 0.0; }}},
        {"ooms", {"OOMs", false, [](const alloc::RunMetrics& m) { return d(m.ooms.size()); }}},
        {"retries", {"retries", false, [](const alloc::RunMetrics& m) { return d(m.retries); }}},
        {"cudaMallocs", {"cudaMalloc calls", false, [](const alloc::RunMetrics& m) { return d(m.cudaMallocs); }}},
        {"cudaFrees", {"cudaFree calls", false, [](const alloc::RunMetrics& m) { return d(m.cudaFrees); }}},
        {"maps", {"pages mapped", false, [](const alloc::RunMetrics& m) { return d(m.maps); }}},
        {"unmaps", {"pages unmapped", false, [](const alloc::RunMetrics& m) { return d(m.unmaps); }}},
        {"gcReleases", {"GC releases", false, [](const alloc::RunMetrics& m) { return d(m.gcReleases); }}},
        {"events", {"allocator events", false, [](const alloc::RunMetrics& m) { return d(m.events); }}},
        {"ops", {"program ops run", false, [](const alloc::RunMetrics& m) { return d(m.ops); }}},
        {"strandedFreeAtPeak", {"stranded free at peak", true, [](const alloc::RunMetrics& m) { return atPeak(m, &F::strandedFree); }}},
        {"totalFreeAtPeak", {"cached free at peak", true, [](const alloc::RunMetrics& m) { return atPeak(m, &F::totalFree); }}},
        {"largestFreeAtPeak", {"largest free block at peak", true, [](const alloc::RunMetrics& m) { return atPeak(m, &F::largestFree); }}},
        {"roundingLossAtPeak", {"rounding loss at peak", true, [](const alloc::RunMetrics& m) { return atPeak(m, &F::roundingLoss); }}},
        {"fragmentationAtPeak", {"fragmentation at peak", false,
                                 [](const alloc::RunMetrics& m) { return m.atPeak ? m.atPeak->fragmentation : std::nan(""); }}},
        {"strandedFreeAtEnd", {"stranded free at the end", true, [](const alloc::RunMetrics& m) { return atEnd(m, &F::strandedFree); }}},
        {"totalFreeAtEnd", {"cached free at the end", true, [](const alloc::RunMetrics& m) { return atEnd(m, &F::totalFree); }}},
        {"largestFreeAtEnd", {"largest free block at the end", true, [](const alloc::RunMetrics& m) { return atEnd(m, &F::largestFree); }}},
        {"releasableAtEnd", {"empty_cache() could release", true, [](const alloc::RunMetrics& m) { return atEnd(m, &F::releasable); }}},
        {"roundingLossAtEnd", {"rounding loss at the end", true, [](const alloc::RunMetrics& m) { return atEnd(m, &F::roundingLoss); }}},
    };
    return table;
}

// Metrics about the config string, known without running anything.
const std::map<std::string, std::pair<const char*, char>>& configMetrics() {
    static const std::map<std::string, std::pair<const char*, char>> table = {
        {"configAccepted", {"PyTorch accepts the config", 'n'}},
        {"configVerdict", {"what PyTorch does with it", 't'}},
        {"configWarnings", {"warnings about the config", 'n'}},
        {"configCorrected", {"corrected config", 't'}},
    };
    return table;
}

bool isStat(const std::string& name) { return name.rfind("stat.", 0) == 0; }

bool knownStat(const std::string& key) {
    static const std::vector<std::pair<std::string, std::int64_t>> keys = alloc::DeviceStats{}.flatten();
    for (const auto& kv : keys) {
        if (kv.first == key) return true;
    }
    return false;
}

double statValue(const alloc::DeviceStats& stats, const std::string& key) {
    for (const auto& kv : stats.flatten()) {
        if (kv.first == key) return static_cast<double>(kv.second);
    }
    return 0.0;
}

std::string mib(double bytes) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
    return buf;
}

}  // namespace

char LessonMetrics::kind(const std::string& name) {
    if (runMetrics().count(name) != 0) return 'n';
    const auto c = configMetrics().find(name);
    if (c != configMetrics().end()) return c->second.second;
    if (isStat(name) && knownStat(name.substr(5))) return 'n';
    return 0;
}

bool LessonMetrics::isBytes(const std::string& name) {
    const auto m = runMetrics().find(name);
    if (m != runMetrics().end()) return m->second.bytes;
    return isStat(name) && name.find("_bytes") != std::string::npos;
}

std::string LessonMetrics::label(const std::string& name) {
    const auto m = runMetrics().find(name);
    if (m != runMetrics().end()) return m->second.label;
    const auto c = configMetrics().find(name);
    if (c != configMetrics().end()) return c->second.first;
    return name.substr(isStat(name) ? 5 : 0);
}

MetricValue LessonMetrics::value(const std::string& name, const LessonRunResult& run) {
    MetricValue v;
    if (name == "configAccepted") {
        v.number = run.configVerdict == "accepted" ? 1.0 : 0.0;
        return v;
    }
    if (name == "configWarnings") {
        v.number = static_cast<double>(run.configWarnings);
        return v;
    }
    if (name == "configVerdict" || name == "configCorrected") {
        v.isText = true;
        v.text = name == "configVerdict" ? run.configVerdict : run.correctedConfig;
        return v;
    }
    if (!run.ran) {
        throw LessonError("run '" + run.id + "' has no " + label(name) + ": it did not run" +
                              (run.configVerdict == "accepted" ? std::string() : " (PyTorch refuses its config: " + run.configVerdict + ")"),
                          "metric " + name + "[" + run.id + "]");
    }
    const auto m = runMetrics().find(name);
    if (m != runMetrics().end()) {
        v.number = m->second.get(run.metrics);
        if (std::isnan(v.number)) {
            throw LessonError("run '" + run.id + "' has no " + label(name) +
                                  " (no segment layout there: a trace replay keeps none at the peak, the async backend none at all)",
                              "metric " + name + "[" + run.id + "]");
        }
        return v;
    }
    if (isStat(name)) {
        v.number = statValue(run.metrics.stats, name.substr(5));
        return v;
    }
    throw LessonError("unknown metric '" + name + "'", "run " + run.id);
}

std::string LessonMetrics::format(const std::string& name, const LessonRunResult& run) {
    if (kind(name) == 0) return "-";
    if (!run.ran && configMetrics().count(name) == 0) return "-";
    const auto m = runMetrics().find(name);
    if (m != runMetrics().end() && std::isnan(m->second.get(run.metrics))) return "-";
    const MetricValue v = value(name, run);
    if (v.isText) return v.text.empty() ? "''" : v.text;
    if (name == "oom" || name == "configAccepted") return v.number != 0.0 ? "yes" : "no";
    if (isBytes(name)) return mib(v.number);
    char buf[64];
    if (name.find("fragmentation") != std::string::npos) {
        std::snprintf(buf, sizeof buf, "%.2f", v.number);
    } else {
        std::snprintf(buf, sizeof buf, "%.0f", v.number);
    }
    return buf;
}

std::vector<std::string> LessonMetrics::names() {
    std::vector<std::string> out;
    for (const auto& kv : runMetrics()) out.push_back(kv.first);
    for (const auto& kv : configMetrics()) out.push_back(kv.first);
    return out;
}

}  // namespace allocscope::app
