#include "allocator/compare/Recommender.h"

#include <algorithm>
#include <atomic>
#include <tuple>
#include <thread>

#include "allocator/config/ConfigParser.h"

namespace allocscope::alloc {

namespace {

bool programSetsFraction(const Program& program) {
    return std::any_of(program.ops.begin(), program.ops.end(),
                       [](const Op& op) { return op.kind == OpKind::SetMemoryFraction && op.fraction < 1.0; });
}

int complexityOf(const AllocatorConfig& c) {
    const AllocatorConfig d;
    int n = 0;
    n += c.backend != d.backend;
    n += c.expandableSegments != d.expandableSegments;
    n += c.maxSplitSize != d.maxSplitSize;
    n += c.roundupPower2Divisions != d.roundupPower2Divisions;
    n += c.garbageCollectionThreshold != d.garbageCollectionThreshold;
    return n;
}

bool fits(const Program& program, const CompareConfig& config, CompareDevice device, std::uint64_t total) {
    device.totalMemory = total;
    CompareOptions o;
    o.fragmentationAtPeak = false;
    o.threads = 1;
    const RunMetrics m = ComparisonEngine::runOne(program, config, device, o);
    return !m.oom() && !m.error;
}

}  // namespace

std::vector<CompareConfig> Recommender::grid(bool withFraction) {
    std::vector<CompareConfig> out;
    for (bool expandable : {false, true}) {
        for (const char* split : {"", "max_split_size_mb:128", "max_split_size_mb:512"}) {
            for (const char* rup : {"", "roundup_power2_divisions:4"}) {
                for (const char* gc : {"", "garbage_collection_threshold:0.6"}) {
                    if (!withFraction && *gc != '\0') continue;
                    std::string text;
                    for (const std::string& part : {std::string(expandable ? "expandable_segments:True" : ""),
                                                   std::string(split), std::string(rup), std::string(gc)}) {
                        if (!part.empty()) text += (text.empty() ? "" : ",") + part;
                    }
                    const ParseResult parsed = parseConfig(text);
                    out.push_back({text.empty() ? "default" : text, parsed.config});
                }
            }
        }
    }
    out.push_back({"backend:cudaMallocAsync", parseConfig("backend:cudaMallocAsync").config});
    return out;
}

std::optional<std::uint64_t> Recommender::smallestGpu(const Program& program, const CompareConfig& config,
                                                      const CompareDevice& device, std::uint64_t granularity) {
    if (!fits(program, config, device, device.totalMemory)) return std::nullopt;
    // Invariant: hi fits; lo does not (the context alone does not leave room for anything).
    std::uint64_t lo = device.otherMemory / granularity;
    std::uint64_t hi = (device.totalMemory + granularity - 1) / granularity;
    while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (fits(program, config, device, mid * granularity)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return std::min(hi * granularity, device.totalMemory);
}

Recommendation Recommender::recommend(const Program& program, const CompareDevice& device,
                                      const RecommendOptions& options) {
    Recommendation rec;
    std::vector<CompareConfig> configs = grid(device.memoryFraction.has_value() || programSetsFraction(program));
    for (const CompareConfig& extra : options.extraConfigs) {
        const bool known = std::any_of(configs.begin(), configs.end(),
                                       [&](const CompareConfig& c) { return c.config == extra.config; });
        if (!known) configs.push_back(extra);
    }
    const auto eligible = [&](const RecommendCandidate& c) {
        return !c.metrics.oom() && !c.metrics.error && (options.asyncEligible || !c.metrics.asyncBackend);
    };
    CompareOptions co;
    co.threads = options.threads;
    co.cost = options.cost;
    co.observerFor = options.observerFor;
    const std::vector<RunMetrics> runs = ComparisonEngine::compare(program, configs, device, co);
    for (std::size_t i = 0; i < configs.size(); ++i) {
        rec.candidates.push_back({configs[i], complexityOf(configs[i].config), runs[i], std::nullopt});
    }
    bool any = false;
    for (const auto& c : rec.candidates) {
        if (!eligible(c)) continue;
        rec.lowestPeakReserved = any ? std::min(rec.lowestPeakReserved, c.metrics.peakReserved) : c.metrics.peakReserved;
        any = true;
    }
    if (any) {
        const double limit = static_cast<double>(rec.lowestPeakReserved) * (1.0 + options.tolerance);
        for (std::size_t i = 0; i < rec.candidates.size(); ++i) {
            const auto& c = rec.candidates[i];
            if (!eligible(c) || static_cast<double>(c.metrics.peakReserved) > limit) continue;
            if (!rec.chosen) {
                rec.chosen = i;
                continue;
            }
            const auto& best = rec.candidates[*rec.chosen];
            const auto key = [](const RecommendCandidate& x) {
                return std::make_tuple(x.complexity, x.metrics.peakReserved, x.metrics.allocatorUs);
            };
            if (key(c) < key(best)) rec.chosen = i;
        }
        const auto& chosen = rec.candidates[*rec.chosen];
        rec.margin = rec.lowestPeakReserved == 0 ? 0.0
                                                 : static_cast<double>(chosen.metrics.peakReserved) /
                                                           static_cast<double>(rec.lowestPeakReserved) - 1.0;
    }
    if (options.searchGpuSize) {
        unsigned threads = options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
        std::atomic<std::size_t> next{0};
        auto worker = [&] {
            for (std::size_t i = next++; i < rec.candidates.size(); i = next++) {
                rec.candidates[i].minTotalMemory =
                    smallestGpu(program, rec.candidates[i].config, device, options.gpuGranularity);
            }
        };
        std::vector<std::thread> pool;
        for (unsigned t = 1; t < std::min<unsigned>(threads, static_cast<unsigned>(rec.candidates.size())); ++t) {
            pool.emplace_back(worker);
        }
        worker();
        for (std::thread& t : pool) t.join();
    }
    return rec;
}

}  // namespace allocscope::alloc
