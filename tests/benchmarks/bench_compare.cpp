// Throughput of the comparison engine: one program run under 8 allocator configs (the 5 shared
// ones + roundup_power2_divisions:4, expandable+max_split_size_mb:128, backend:cudaMallocAsync),
// each run on its own simulated h100-80gb, with 1 thread and with 2 threads. Reports runs/s,
// program ops/s (ops x runs / wall time) and the 1 -> 2 thread speed-up, best of 3 passes.
// Programs: llm-training at the train_gpt shape (5,419 ops) and random-mix (200,000 ops).
// Also: streaming generation speed of random-mix at 10^7 ops.
// --smoke: tiny programs, one pass, no timing claims.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/ConfigParser.h"
#include "allocator/workloads/WorkloadRegistry.h"

using namespace allocscope::alloc;

namespace {

// Seconds per comparison: best of `passes` passes of `reps` comparisons each.
double bestSeconds(const Program& program, const std::vector<CompareConfig>& configs, unsigned threads, int passes,
                   int reps) {
    double best = 1e30;
    CompareOptions options;
    options.threads = threads;
    for (int p = 0; p < passes; ++p) {
        const auto start = std::chrono::steady_clock::now();
        for (int r = 0; r < reps; ++r) {
            const auto runs = ComparisonEngine::compare(program, configs, CompareDevice{}, options);
            for (const RunMetrics& m : runs) {
                if (m.error) {
                    std::fprintf(stderr, "bench_compare: run failed: %s\n", m.error->c_str());
                    return -1;
                }
            }
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::min(best, s / reps);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
    std::vector<CompareConfig> configs;
    for (const char* text : {"", "expandable_segments:True", "max_split_size_mb:128",
                             "garbage_collection_threshold:0.6,max_split_size_mb:256", "roundup_power2_divisions:4",
                             "expandable_segments:True,max_split_size_mb:128", "backend:cudaMallocAsync",
                             "max_split_size_mb:512"}) {
        configs.push_back({text[0] ? text : "default", parseConfig(text).config});
    }
    const auto& registry = WorkloadRegistry::instance();
    struct Case {
        const char* name;
        std::vector<std::pair<std::string, std::string>> params;
    };
    const std::vector<Case> cases = smoke ? std::vector<Case>{{"llm-training", {{"layers", "1"}, {"steps", "1"}, {"vocab", "100"}}},
                                                              {"random-mix", {{"events", "2000"}}}}
                                          : std::vector<Case>{{"llm-training", {}}, {"random-mix", {{"events", "200000"}}}};
    const int passes = smoke ? 1 : 3;
    std::printf("bench_compare: %zu configs per comparison, hardware threads %u%s\n", configs.size(),
                std::thread::hardware_concurrency(), smoke ? " (smoke: no timing claims)" : "");
    for (const Case& c : cases) {
        const Workload& w = registry.get(c.name);
        const Program program = w.generate(w.resolve(c.params), 1).program;
        // Enough comparisons per pass for ~0.3 s of single-thread work (short programs).
        const double probe = bestSeconds(program, configs, 1, 1, 1);
        const int reps = smoke || probe <= 0 ? 1 : std::max(1, static_cast<int>(0.3 / probe));
        const double one = bestSeconds(program, configs, 1, passes, reps);
        const double two = bestSeconds(program, configs, 2, passes, reps);
        if (one < 0 || two < 0) return 1;
        const double runs = static_cast<double>(configs.size());
        const double ops = static_cast<double>(program.ops.size()) * runs;
        std::printf("%-14s %8zu ops  1 thread: %7.3f s  %7.2f runs/s  %10.0f ops/s | 2 threads: %7.3f s  %7.2f runs/s  "
                    "%10.0f ops/s | speed-up %.2fx\n",
                    c.name, program.ops.size(), one, runs / one, ops / one, two, runs / two, ops / two, one / two);
    }
    // Streaming generation of random-mix (what the storage benchmark feeds at 10^7 ops).
    {
        const Workload& w = registry.get("random-mix");
        const std::string events = smoke ? "10000" : "10000000";
        const auto start = std::chrono::steady_clock::now();
        auto source = w.open(w.resolve({{"events", events}}), 1);
        std::vector<Op> chunk;
        std::size_t ops = 0, largestChunk = 0;
        while (source->nextChunk(chunk)) {
            ops += chunk.size();
            largestChunk = std::max(largestChunk, chunk.size());
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("random-mix generation (streamed): %zu ops in %.3f s = %.0f ops/s, largest chunk %zu ops\n", ops, s,
                    static_cast<double>(ops) / s, largestChunk);
    }
    return 0;
}
