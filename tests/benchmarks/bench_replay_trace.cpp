// Replay throughput: trace entries replayed per second.
//   1. the largest shared trace (train_gpt__default.pickle, ~8,100 entries), replayed exactly under
//      its own config with the recorded-address oracle and full comparison, several times;
//   2. a synthetic 1,000,000-entry trace (alloc / free pairs on two streams, sizes from 512 B to
//      64 MiB), replayed with the device's own placement and no comparison.
// Usage: bench_replay_trace [--smoke] [--trace FILE] [--repeat N]
//   --smoke: one replay of the trace (when found) and a 3,000-entry synthetic one; no timing claims.
// The trace defaults to $ALLOCSCOPE_TEST_DATA/traces/train_gpt__default.pickle.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "allocator/config/ConfigParser.h"
#include "allocator/replay/PlacementModel.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/import/TraceImport.h"

using namespace allocscope;

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// A deterministic program: keep up to 2,000 tensors live, allocate or free at random.
alloc::RecordedTrace synthetic(std::size_t entries) {
    alloc::RecordedTrace trace;
    trace.origin = "synthetic";
    trace.hasSegmentEvents = false;
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    auto next = [&state] {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    };
    std::vector<std::pair<std::uint64_t, std::uint64_t>> live;  // (address, size)
    std::uint64_t address = 0x100000000ull;
    while (trace.entries.size() + 2 < entries) {
        const bool doAlloc = live.empty() || (live.size() < 2000 && next() % 2 == 0);
        if (doAlloc) {
            const std::uint64_t r = next();
            const std::uint64_t size = (r % 8 == 0) ? 1 + r % (64ull << 20) : 1 + r % (512ull << 10);
            alloc::RecordedEntry e;
            e.action = alloc::EventAction::Alloc;
            e.address = address;
            e.size = size;
            e.streamIndex = trace.streamIndex((r >> 32) % 4 == 0 ? 7 : 0);
            address += (size + 0xFFFF) & ~0xFFFFull;
            trace.entries.push_back(e);
            live.emplace_back(e.address, size);
        } else {
            const std::size_t i = next() % live.size();
            alloc::RecordedEntry e;
            e.address = live[i].first;
            e.size = live[i].second;
            e.action = alloc::EventAction::FreeRequested;
            trace.entries.push_back(e);
            e.action = alloc::EventAction::FreeCompleted;
            trace.entries.push_back(e);
            live[i] = live.back();
            live.pop_back();
        }
    }
    return trace;
}

}  // namespace

int main(int argc, char** argv) {
    bool smoke = false;
    int repeat = 20;
    std::string tracePath;
    if (const char* data = std::getenv("ALLOCSCOPE_TEST_DATA")) tracePath = std::string(data) + "/traces/train_gpt__default.pickle";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--smoke") {
            smoke = true;
        } else if (a == "--trace" && i + 1 < argc) {
            tracePath = argv[++i];
        } else if (a == "--repeat" && i + 1 < argc) {
            repeat = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: bench_replay_trace [--smoke] [--trace FILE] [--repeat N]\n");
            return 2;
        }
    }
    if (smoke) repeat = 1;

    if (!tracePath.empty()) {
        try {
            const std::vector<alloc::RecordedTrace> traces = storage::importTraceFile(tracePath);
            const alloc::RecordedTrace& trace = traces.front();
            alloc::ReplayOptions options;
            options.config = alloc::parseConfig(trace.settings.value_or("")).config;
            const auto start = std::chrono::steady_clock::now();
            bool exact = true;
            for (int r = 0; r < repeat; ++r) exact = alloc::TraceReplayer::replay(trace, options).exact() && exact;
            const double s = seconds(start);
            std::printf("trace %s: %zu entries x %d replays, %s", tracePath.c_str(), trace.entries.size(), repeat,
                        exact ? "exact" : "NOT exact");
            if (!smoke) std::printf(", %.3f s, %.0f entries/s", s, static_cast<double>(trace.entries.size()) * repeat / s);
            std::printf("\n");
            if (!exact) return 1;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bench_replay_trace: cannot read %s: %s\n", tracePath.c_str(), e.what());
            if (!smoke) return 1;
        }
    } else {
        std::printf("trace: skipped (no --trace and no ALLOCSCOPE_TEST_DATA)\n");
    }

    const alloc::RecordedTrace trace = synthetic(smoke ? 3000 : 1'000'000);
    alloc::NoPlacement placement;
    alloc::ReplayOptions options;
    options.placement = &placement;
    options.continueAfterOom = true;
    const auto start = std::chrono::steady_clock::now();
    const alloc::ReplayResult result = alloc::TraceReplayer::replay(trace, options);
    const double s = seconds(start);
    std::printf("synthetic: %zu entries, %zu ops, %llu events, peak reserved %lld B", trace.entries.size(),
                result.program.ops.size(), static_cast<unsigned long long>(result.events),
                static_cast<long long>(result.stats.reserved_bytes[alloc::kAggregate].peak));
    if (!smoke) std::printf(", %.3f s, %.0f entries/s", s, static_cast<double>(trace.entries.size()) / s);
    std::printf("\n");
    return 0;
}
