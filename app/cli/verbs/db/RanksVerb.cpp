// `allocscope-cli ranks --db SESSION [--json] [--threshold PERCENT]`: the ranks overview of a
// session holding a distributed job's per-rank runs (storage::RankOverview): per run its peak
// reserved and allocated memory, fragmentation at the peak, retries, OOMs and verdict, with the
// outliers flagged against the median rank. Opens the session read-only.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>

#include "app/cli/VerbRegistry.h"
#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/RankOverview.h"
#include "storage/session/SessionReader.h"

namespace allocscope::cli {
namespace {

constexpr const char* kUsage = "usage: allocscope-cli ranks --db SESSION [--json] [--threshold PERCENT]";

int usage(VerbContext& ctx, const std::string& problem) {
    ctx.err << "allocscope-cli: ranks: " << problem << "\n" << kUsage << "\n";
    return kExitUsage;
}

std::string fixed(double value, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string mib(std::int64_t bytes) { return fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1); }

std::string flags(const storage::RankRow& row, double threshold) {
    std::string out;
    if (row.oomOutlier) out += "OOM";
    if (row.reservedOutlier) {
        out += out.empty() ? "" : ", ";
        out += "reserved +" + fixed(row.aboveMedian * 100.0, 1) + "% (> " + fixed(threshold * 100.0, 1) + "%)";
    }
    return out;
}

std::string verdictWord(const storage::RankRow& row) {
    return row.verdict == storage::VerdictKind::WhatIf ? "what-if" : storage::verdictKindName(row.verdict);
}

void printText(std::ostream& out, const std::string& path, const storage::RankOverviewData& data) {
    out << "session " << path << ": " << data.rows.size() << " run" << (data.rows.size() == 1 ? "" : "s");
    if (data.medianRun > 0) {
        out << "; median rank: run " << data.medianRun << ", peak reserved " << mib(data.medianPeakReserved) << " MiB";
    }
    out << "\noutlier: an OOM, or peak reserved more than " << fixed(data.threshold * 100.0, 1)
        << "% above the median; frag@peak = 1 - allocated / reserved at the peak of reserved (its moment with the most allocated)\n";
    char header[256];
    std::snprintf(header, sizeof header, "%5s %6s %14s %15s %10s %8s %5s  %-9s %s\n", "run", "rank", "peak reserved",
                  "peak allocated", "frag@peak", "retries", "OOMs", "verdict", "name [outlier]");
    out << header;
    for (const storage::RankRow& row : data.rows) {
        const std::string rank = row.rank ? std::to_string(row.rank->rank) : "-";
        char line[256];
        if (row.complete) {
            std::snprintf(line, sizeof line, "%5d %6s %10s MiB %11s MiB %9s%% %8lld %5lld  %-9s ", row.run, rank.c_str(),
                          mib(row.peakReserved).c_str(), mib(row.peakAllocated).c_str(),
                          fixed(row.fragmentationAtPeak * 100.0, 1).c_str(), static_cast<long long>(row.retries),
                          static_cast<long long>(row.ooms), verdictWord(row).c_str());
        } else {
            std::snprintf(line, sizeof line, "%5d %6s %14s %15s %10s %8s %5s  %-9s ", row.run, rank.c_str(), "-", "-", "-", "-", "-",
                          verdictWord(row).c_str());
        }
        out << line << row.name;
        if (!row.complete) out << " [not complete: no numbers]";
        const std::string flagged = flags(row, data.threshold);
        if (!flagged.empty()) out << " [" << flagged << "]";
        out << "\n";
    }
}

void printJson(std::ostream& out, const std::string& path, const storage::RankOverviewData& data) {
    out << "{\"session\": " << jsonString(path) << ", \"threshold\": " << data.threshold
        << ", \"median_run\": " << data.medianRun << ", \"median_peak_reserved\": " << data.medianPeakReserved << ", \"runs\": [";
    for (std::size_t i = 0; i < data.rows.size(); ++i) {
        const storage::RankRow& row = data.rows[i];
        out << (i > 0 ? ", " : "") << "{\"run\": " << row.run << ", \"name\": " << jsonString(row.name) << ", \"rank\": ";
        if (row.rank) out << row.rank->rank << ", \"rank_source\": " << jsonString(row.rank->source);
        else out << "null, \"rank_source\": null";
        out << ", \"complete\": " << (row.complete ? "true" : "false") << ", \"peak_reserved\": " << row.peakReserved
            << ", \"peak_allocated\": " << row.peakAllocated << ", \"fragmentation_at_peak\": " << row.fragmentationAtPeak
            << ", \"retries\": " << row.retries << ", \"ooms\": " << row.ooms
            << ", \"verdict\": " << jsonString(storage::verdictKindName(row.verdict))
            << ", \"verdict_text\": " << jsonString(row.verdictText) << ", \"above_median\": " << row.aboveMedian
            << ", \"outlier\": " << (row.outlier() ? "true" : "false") << ", \"outlier_oom\": " << (row.oomOutlier ? "true" : "false")
            << ", \"outlier_reserved\": " << (row.reservedOutlier ? "true" : "false") << "}";
    }
    out << "]}\n";
}

int runRanks(VerbContext& ctx) {
    std::string path;
    bool json = false;
    double threshold = storage::RankOverview::kDefaultThreshold;
    for (std::size_t i = 0; i < ctx.args.size(); ++i) {
        const std::string& arg = ctx.args[i];
        if (arg == "--json") {
            json = true;
        } else if (arg == "--db" || arg == "--threshold") {
            if (i + 1 >= ctx.args.size()) return usage(ctx, arg + " needs a value");
            const std::string& value = ctx.args[++i];
            if (arg == "--db") {
                path = value;
                continue;
            }
            char* end = nullptr;
            const double percent = std::strtod(value.c_str(), &end);
            if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(percent) || percent < 0 || percent > 1000) {
                return usage(ctx, "--threshold takes a percentage from 0 to 1000 (got '" + value + "')");
            }
            threshold = percent / 100.0;
        } else {
            return usage(ctx, "unknown argument '" + arg + "'");
        }
    }
    if (path.empty()) return usage(ctx, "--db SESSION is required");
    try {
        storage::SessionReader reader(path);
        const storage::RankOverviewData data = storage::RankOverview::build(reader.runs(), threshold);
        if (json) printJson(ctx.out, path, data);
        else printText(ctx.out, path, data);
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    }
    return kExitOk;
}

const VerbRegistration kRegistration{Verb{
    "ranks", "compare a distributed job's ranks: peaks, fragmentation, retries, OOMs, outliers",
    std::string(kUsage) +
        "\n\nOpens SESSION read-only (e.g. made by `import rank*.pickle --db SESSION`) and prints one row per\n"
        "run, ordered by rank (runs without one last): peak reserved, peak allocated, fragmentation at\n"
        "the peak (1 - allocated / reserved while reserved was at its peak, at the moment of that peak\n"
        "with the most allocated), allocation retries, OOMs and the\n"
        "verdict (exact / diverged / what-if / simulated / unknown). The median rank is the complete\n"
        "run with the median peak reserved (the lower one of an even count); a run is flagged as an\n"
        "outlier when it hit an OOM or its peak reserved is more than --threshold percent (default 10)\n"
        "above the median's. --json prints the same as one JSON object. Exit 1 if SESSION is not an\n"
        "intact AllocScope session; 2 usage.",
    runRanks}};

}  // namespace
}  // namespace allocscope::cli
