// Session-file performance on a reference run: 10,000,000 events from a random mix (>= 1,000
// live blocks at peak, >= 100 segments, 3 streams) generated with CachingAllocator on the
// simulated h100-80gb and recorded end to end (allocator + SessionRecorder + writer thread +
// commit). Then, on the recorded file: state at 1,000 random events, +-1 steps from a loaded
// state, a 2,000-bucket timeline and a 1,024 x 512 heatmap over the whole run.
//
//   bench_storage_session [--events N] [--dir DIR] [--keep] [--record-only]   (default N = 10,000,000)
//   bench_storage_session --smoke                                (20,000 events, no claims)
//
// Needs about 40 bytes of disk per event; checks free space first and deletes its file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/workloads/Rng.h"
#include "storage/session/HeatmapQuery.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"
#include "storage/session/SessionRecorder.h"
#include "storage/session/SessionWriter.h"
#include "storage/session/StateCursor.h"
#include "storage/session/TimelineQuery.h"

using namespace allocscope;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// CPU time (ms) of the process (all threads) or of this thread: on a shared, loaded machine
// wall time mostly measures the other processes; CPU time is what this code costs.
double cpuMs(clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
double processCpuMs() { return cpuMs(CLOCK_PROCESS_CPUTIME_ID); }
double threadCpuMs() { return cpuMs(CLOCK_THREAD_CPUTIME_ID); }

struct MixStats {
    std::uint64_t events = 0;
    std::size_t maxLive = 0;
    std::int64_t maxSegments = 0;
};

// The random mix: ~3,000 live tensors on three streams, sizes log-uniform in three bands.
// Stops once the sink has seen `events` events.
template <typename CountFn>
MixStats runMix(alloc::CachingAllocator& allocator, std::uint64_t events, CountFn count,
                storage::SessionRecorder* recorder) {
    alloc::Rng rng(20261122);
    const alloc::StreamId streams[3] = {0, 0x7a01, 0x7a02};
    std::vector<std::uint64_t> live;
    live.reserve(8192);
    MixStats stats;
    std::uint64_t op = 0;
    while (count() < events) {
        allocator.setOpIndex(op++);
        const bool doAlloc = live.size() < 2000 || (live.size() < 4000 && rng.chance(0.5));
        if (doAlloc) {
            const double band = rng.unit();
            std::uint64_t size = 0;
            if (band < 0.70) size = rng.logUniform(1, 1 << 20);
            else if (band < 0.98) size = rng.logUniform(1 << 20, 20 << 20);
            else size = rng.logUniform(20 << 20, 200 << 20);
            if (auto address = allocator.malloc(size, streams[rng.uniform(0, 2)], static_cast<std::uint32_t>(rng.uniform(0, 7)))) {
                live.push_back(*address);
            }
        } else {
            const std::size_t k = rng.uniform(0, live.size() - 1);
            allocator.free(live[k]);
            live[k] = live.back();
            live.pop_back();
        }
        if (recorder != nullptr) recorder->syncStats(allocator.stats());
        stats.maxLive = std::max(stats.maxLive, live.size());
        stats.maxSegments = std::max(stats.maxSegments, allocator.stats().segment[alloc::kAggregate].current);
    }
    stats.events = count();
    return stats;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
    std::uint64_t events = 10'000'000;
    bool smoke = false;
    bool keep = false;
    bool recordOnly = false;  // profiling aid: stop after recording
    std::string dir = std::filesystem::temp_directory_path().string();
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--smoke") == 0) smoke = true;
        else if (std::strcmp(argv[i], "--keep") == 0) keep = true;
        else if (std::strcmp(argv[i], "--record-only") == 0) recordOnly = true;
        else if (std::strcmp(argv[i], "--events") == 0 && i + 1 < argc) events = std::stoull(argv[++i]);
        else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else {
            std::fprintf(stderr, "usage: bench_storage_session [--smoke] [--events N] [--dir DIR] [--keep]\n");
            return 2;
        }
    }
    if (smoke) events = 20'000;
    const std::string path = dir + "/bench_storage_session." + std::to_string(::getpid()) + ".allocscope";
    std::error_code ec;
    const auto space = std::filesystem::space(dir, ec);
    const std::uint64_t needed = events * 60 + (64ull << 20);
    if (ec || space.available < needed) {
        std::fprintf(stderr, "bench_storage_session: not enough free disk in %s (need %llu MB)\n", dir.c_str(),
                     static_cast<unsigned long long>(needed >> 20));
        return smoke ? 0 : 1;
    }
    const alloc::GpuPreset preset = *alloc::findGpuPreset("h100-80gb");
    try {
        // Baseline: the allocator alone (events counted, not recorded).
        double allocatorMs = 0;
        double allocatorCpuMs = 0;
        {
            alloc::SimulatedDevice device(preset);
            alloc::CountingSink counting;
            alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &counting);
            const auto start = Clock::now();
            const double cpu0 = processCpuMs();
            runMix(allocator, events, [&] { return counting.total(); }, nullptr);
            allocatorMs = msSince(start);
            allocatorCpuMs = processCpuMs() - cpu0;
        }
        // Recording end to end.
        std::filesystem::remove(path);
        MixStats mix;
        double recordMs = 0;
        double recordCpuMs = 0;
        int run = 0;
        {
            const auto start = Clock::now();
            const double cpu0 = processCpuMs();
            storage::SessionWriter writer(path);
            alloc::SimulatedDevice device(preset);
            alloc::TeeSink tee;
            alloc::CachingAllocator allocator(alloc::AllocatorConfig{}, device, &tee);
            storage::RunInfo info;
            info.name = "bench random mix";
            info.source = "bench_storage_session events=" + std::to_string(events);
            info.gpu = preset.name;
            info.totalMemory = preset.totalMemory;
            storage::SessionRecorder recorder(writer, info, allocator.stats());
            tee.add(&recorder);
            mix = runMix(allocator, events, [&] { return recorder.eventCount(); }, &recorder);
            recorder.finish();
            run = recorder.runNumber();
            recordMs = msSince(start);
            recordCpuMs = processCpuMs() - cpu0;
        }
        const auto fileBytes = std::filesystem::file_size(path);
        std::printf("reference run: %llu events, max live blocks %zu, max segments %lld, 3 streams, file %.1f MB (%.1f B/event)\n",
                    static_cast<unsigned long long>(mix.events), mix.maxLive, static_cast<long long>(mix.maxSegments),
                    static_cast<double>(fileBytes) / 1e6, static_cast<double>(fileBytes) / static_cast<double>(mix.events));
        std::printf("allocator alone: wall %.0f ms (%.2f M events/s), cpu %.0f ms\n", allocatorMs,
                    static_cast<double>(events) / allocatorMs / 1e3, allocatorCpuMs);
        std::printf("recording end to end: wall %.0f ms = %.2f M events/s (target >= 1.00); cpu %.0f ms over both threads "
                    "(%.2f M events per cpu-second)\n",
                    recordMs, static_cast<double>(mix.events) / recordMs / 1e3, recordCpuMs,
                    static_cast<double>(mix.events) / recordCpuMs / 1e3);

        if (recordOnly) {
            if (keep) std::printf("kept %s\n", path.c_str());
            else std::filesystem::remove(path);
            return 0;
        }
        storage::SessionReader reader(path, false);
        const std::uint64_t total = reader.run(run).eventCount;
        std::mt19937_64 rng(7);
        const int samples = smoke ? 20 : 1000;
        std::vector<double> load, stepForward, stepBack, loadCpu;
        storage::StateCursor cursor(reader, run);
        for (int i = 0; i < samples; ++i) {
            const std::uint64_t seq = 1 + rng() % (total - 2);
            auto start = Clock::now();
            const double cpu0 = threadCpuMs();
            const storage::StateAtEvent state = cursor.load(seq);
            load.push_back(msSince(start));
            loadCpu.push_back(threadCpuMs() - cpu0);
            if (state.segments.empty()) throw storage::SessionError("empty state", path);
            start = Clock::now();
            cursor.step(+1);
            stepForward.push_back(msSince(start));
            start = Clock::now();
            cursor.step(-1);
            stepBack.push_back(msSince(start));
        }
        std::printf("state at event (%d random): wall median %.2f ms, p90 %.2f ms, max %.2f ms (targets <= 10 / <= 50); "
                    "cpu median %.2f ms, max %.2f ms\n",
                    samples, percentile(load, 0.5), percentile(load, 0.9), percentile(load, 1.0), percentile(loadCpu, 0.5),
                    percentile(loadCpu, 1.0));
        std::printf("step +1: median %.3f ms, max %.3f ms; step -1: median %.3f ms, max %.3f ms (target <= 1)\n",
                    percentile(stepForward, 0.5), percentile(stepForward, 1.0), percentile(stepBack, 0.5),
                    percentile(stepBack, 1.0));
        std::vector<double> timeline, heatmap, timelineCpu, heatmapCpu;
        for (int i = 0; i < 5; ++i) {
            auto start = Clock::now();
            double cpu0 = threadCpuMs();
            const storage::Timeline t = storage::TimelineQuery::build(reader, run, 0, total - 1, 2000);
            timeline.push_back(msSince(start));
            timelineCpu.push_back(threadCpuMs() - cpu0);
            if (t.buckets.empty()) throw storage::SessionError("empty timeline", path);
            start = Clock::now();
            cpu0 = threadCpuMs();
            const storage::HeatmapGrid grid = storage::HeatmapQuery::build(reader, run, 0, total - 1, 1024, 512);
            heatmap.push_back(msSince(start));
            heatmapCpu.push_back(threadCpuMs() - cpu0);
            if (grid.columns == 0) throw storage::SessionError("empty heatmap", path);
        }
        std::printf("timeline 2,000 buckets, whole run: wall median %.1f ms, max %.1f ms (target <= 100); cpu median %.1f ms\n",
                    percentile(timeline, 0.5), percentile(timeline, 1.0), percentile(timelineCpu, 0.5));
        std::printf("heatmap 1,024 x 512, whole run: wall median %.1f ms, max %.1f ms (target <= 200); cpu median %.1f ms\n",
                    percentile(heatmap, 0.5), percentile(heatmap, 1.0), percentile(heatmapCpu, 0.5));
        if (smoke) std::printf("(smoke run: sizes are tiny, no timing claims)\n");
    } catch (const storage::SessionError& e) {
        std::fprintf(stderr, "bench_storage_session: %s\n", e.what());
        std::filesystem::remove(path);
        return 1;
    }
    if (!keep) std::filesystem::remove(path);
    return 0;
}
