// The speed race on a real GPU: one fixed sequence of alloc/free operations (the allocator-core
// benchmark's sequence, AllocBenchSequence.h: mixed sizes 512 B - 256 MiB, random frees, the size
// mix of PyTorch's anchor benchmark) replayed through
//   - AllocScope's CachingAllocator on CudaDevice (real device pointers, statistics kept,
//     a CountingSink attached),
//   - PyTorch's c10 CUDA caching allocator (built with -DALLOCSCOPE_WITH_C10, see gpu.cmake),
//   - cudaMallocAsync / cudaFreeAsync on the default pool (release threshold UINT64_MAX),
//   - cudaMalloc / cudaFree (the first 20,000 operations only: it is ~100x slower),
// under the configuration in PYTORCH_CUDA_ALLOC_CONF ("" or expandable_segments:True; c10 reads
// the same variable). Each backend: one warm pass, then the best of --passes timed passes
// (ns per operation; a pass also frees what is still live at its end, as PyTorch's anchor
// benchmark does). Nothing is touched inside the timed loops.
//
// After the passes, AllocScope's statistics (all 122 keys) and segment/block layout (sizes,
// states, order; addresses aside) must equal c10's: printed as MATCH or the first difference.
// The same check runs again in the middle of the sequence (after --probe-ops operations, default
// half of them), where
// blocks are live and segments split.
//
//   bench_gpu_race [--smoke] [--ops N] [--passes P] [--malloc-ops M] [--probe-ops K]
//                  [--stats-dir DIR] [--skip-malloc]
//   --smoke: a tiny sequence, no timing claims; prints "no GPU" and exits 0 without a GPU.
//   --stats-dir: writes allocscope_stats.json / c10_stats.json / async_stats.json (flat
//                {"key": value}) for tests/gpu/compare_stats.py.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/core/SegmentInfo.h"
#include "tests/gpu/FlatStatsJson.h"
#include "tests/gpu/RaceOps.h"

#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/CudaAsyncBackend.h"
#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaError.h"
#include "allocator/device/cuda/CudaRawCalls.h"
#endif
#ifdef ALLOCSCOPE_WITH_C10
#include "tests/gpu/C10Backend.h"
#endif

using namespace allocscope::alloc;
using allocscope::gpu::makeRaceOps;
using allocscope::gpu::RaceOp;
using allocscope::gpu::RaceOps;

namespace {

struct Args {
    bool smoke = false;
    std::size_t ops = 1'000'000;
    int passes = 5;
    std::size_t mallocOps = 20'000;
    std::size_t probeOps = 0;  // 0: half the sequence
    std::string statsDir;
    bool skipMalloc = false;
};

bool parseArgs(int argc, char** argv, Args& args) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&](std::size_t& out) {
            if (i + 1 >= argc) return false;
            out = std::strtoull(argv[++i], nullptr, 10);
            return true;
        };
        std::size_t number = 0;
        if (arg == "--smoke") {
            args.smoke = true;
        } else if (arg == "--ops" && value(number) && number > 0) {
            args.ops = number;
        } else if (arg == "--passes" && value(number) && number > 0) {
            args.passes = static_cast<int>(number);
        } else if (arg == "--malloc-ops" && value(number)) {
            args.mallocOps = number;
        } else if (arg == "--probe-ops" && value(number)) {
            args.probeOps = number;
        } else if (arg == "--stats-dir" && i + 1 < argc) {
            args.statsDir = argv[++i];
        } else if (arg == "--skip-malloc") {
            args.skipMalloc = true;
        } else {
            std::fprintf(stderr, "bench_gpu_race: bad argument '%s'\n", arg.c_str());
            return false;
        }
    }
    if (args.smoke) {
        args.ops = 2'000;
        args.passes = 1;
        args.mallocOps = 200;
        args.probeOps = 500;
    }
    if (args.probeOps == 0) args.probeOps = args.ops / 2;
    return true;
}

// --- the timed loop -------------------------------------------------------------------------

// One pass: every op, then the frees of what is still live; returns ns per operation.
template <typename Alloc, typename Free>
double timedPass(const RaceOps& race, std::size_t opCount, const std::vector<std::uint32_t>& leftover,
                 std::vector<std::uint64_t>& slots, Alloc alloc, Free release) {
    const auto start = std::chrono::steady_clock::now();
    std::size_t done = 0;
    for (std::size_t i = 0; i < opCount; ++i) {
        const RaceOp& op = race.ops[i];
        if (op.alloc) {
            slots[op.id] = alloc(op.size);
        } else {
            release(slots[op.id]);
        }
        ++done;
    }
    for (std::uint32_t id : leftover) {
        release(slots[id]);
        ++done;
    }
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(done);
}

// Warm pass, then the best of `passes`.
template <typename Alloc, typename Free, typename After>
double bestOf(const RaceOps& race, std::size_t opCount, int passes, Alloc alloc, Free release, After afterPass) {
    std::vector<std::uint64_t> slots(race.idCount, 0);
    const std::vector<std::uint32_t> leftover = race.liveAfter(opCount);
    timedPass(race, opCount, leftover, slots, alloc, release);
    afterPass();
    double best = 1e300;
    for (int p = 0; p < passes; ++p) {
        best = std::min(best, timedPass(race, opCount, leftover, slots, alloc, release));
        afterPass();
    }
    return best;
}

// Runs the first `count` ops (untimed), calls `inspect`, then frees what is live.
template <typename Alloc, typename Free, typename Inspect>
void probe(const RaceOps& race, std::size_t count, Alloc alloc, Free release, Inspect inspect) {
    std::vector<std::uint64_t> slots(race.idCount, 0);
    for (std::size_t i = 0; i < count; ++i) {
        const RaceOp& op = race.ops[i];
        if (op.alloc) {
            slots[op.id] = alloc(op.size);
        } else {
            release(slots[op.id]);
        }
    }
    inspect();
    for (std::uint32_t id : race.liveAfter(count)) release(slots[id]);
}

// --- comparisons ----------------------------------------------------------------------------

[[maybe_unused]] std::string compareStats(const DeviceStats& ours, const DeviceStats& theirs) {
    const auto a = ours.flatten();
    const auto b = theirs.flatten();
    if (a.size() != b.size()) return "DIFF key count " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) {
            return "DIFF " + a[i].first + ": allocscope " + std::to_string(a[i].second) + ", c10 " +
                   std::to_string(b[i].second);
        }
    }
    return "MATCH (" + std::to_string(a.size()) + " keys)";
}

[[maybe_unused]] std::string compareLayouts(const std::vector<SegmentInfo>& ours, const std::vector<SegmentInfo>& theirs) {
    auto field = [](std::size_t s, const std::string& what, std::uint64_t a, std::uint64_t b) {
        return "DIFF segment " + std::to_string(s) + " " + what + ": allocscope " + std::to_string(a) + ", c10 " +
               std::to_string(b);
    };
    if (ours.size() != theirs.size()) return field(0, "count", ours.size(), theirs.size());
    std::size_t blocks = 0;
    for (std::size_t s = 0; s < ours.size(); ++s) {
        const SegmentInfo& a = ours[s];
        const SegmentInfo& b = theirs[s];
        if (a.totalSize != b.totalSize) return field(s, "total_size", a.totalSize, b.totalSize);
        if (a.pool != b.pool) return field(s, "is_large", a.pool == PoolKind::Large, b.pool == PoolKind::Large);
        if (a.isExpandable != b.isExpandable) return field(s, "is_expandable", a.isExpandable, b.isExpandable);
        if (a.allocatedSize != b.allocatedSize) return field(s, "allocated_size", a.allocatedSize, b.allocatedSize);
        if (a.activeSize != b.activeSize) return field(s, "active_size", a.activeSize, b.activeSize);
        if (a.requestedSize != b.requestedSize) return field(s, "requested_size", a.requestedSize, b.requestedSize);
        if (a.blocks.size() != b.blocks.size()) return field(s, "block count", a.blocks.size(), b.blocks.size());
        for (std::size_t k = 0; k < a.blocks.size(); ++k) {
            const std::string where = "block " + std::to_string(k) + " ";
            if (a.blocks[k].size != b.blocks[k].size) return field(s, where + "size", a.blocks[k].size, b.blocks[k].size);
            if (a.blocks[k].state != b.blocks[k].state) {
                return "DIFF segment " + std::to_string(s) + " " + where + "state: allocscope " +
                       std::string(blockStateName(a.blocks[k].state)) + ", c10 " + std::string(blockStateName(b.blocks[k].state));
            }
            if (a.blocks[k].requestedSize != b.blocks[k].requestedSize) {
                return field(s, where + "requested_size", a.blocks[k].requestedSize, b.blocks[k].requestedSize);
            }
        }
        blocks += a.blocks.size();
    }
    return "MATCH (" + std::to_string(ours.size()) + " segments, " + std::to_string(blocks) + " blocks)";
}

void writeStatsJson(const std::string& dir, const std::string& name, const DeviceStats& stats) {
    if (dir.empty()) return;
    const std::string path = dir + "/" + name;
    if (!allocscope::gpu::writeFlatStatsJson(path, stats)) std::fprintf(stderr, "bench_gpu_race: cannot write %s\n", path.c_str());
}

struct Row {
    std::string backend;
    double ns = 0;
};

#ifdef ALLOCSCOPE_HAVE_CUDA

struct Captured {
    DeviceStats stats;
    std::vector<SegmentInfo> segments;
};

int race(const Args& args, const std::string& configName, bool expandable) {
    const RaceOps race = makeRaceOps(args.ops);
    const std::size_t n = race.ops.size();
    const std::size_t probeAt = std::min(args.probeOps, n);
    CudaRawCalls::setDevice(0);
    std::printf("device %s ops %zu passes %d config %s%s\n", CudaRawCalls::deviceName(0).c_str(), n, args.passes,
                configName.c_str(), args.smoke ? " (smoke: no timing claims)" : "");
    std::vector<Row> rows;

#ifdef ALLOCSCOPE_WITH_C10
    // c10 first, while the device is fresh; its cache is emptied before AllocScope runs, so
    // both see the same driver state for their segments.
    allocscope::gpu::C10Backend pytorch;
    Captured c10AfterPasses;
    Captured c10AtProbe;
    {
        const double ns = bestOf(
            race, n, args.passes, [&](std::uint64_t size) { return pytorch.allocate(size); },
            [&](std::uint64_t p) { pytorch.release(p); }, [] {});
        rows.push_back({"c10", ns});
        c10AfterPasses = {pytorch.stats(), pytorch.segments()};
        probe(
            race, probeAt, [&](std::uint64_t size) { return pytorch.allocate(size); }, [&](std::uint64_t p) { pytorch.release(p); },
            [&] { c10AtProbe = {pytorch.stats(), pytorch.segments()}; });
        pytorch.emptyCache();
        std::printf("c10 allocator: %s\n", pytorch.name().c_str());
    }
#endif

    Captured oursAfterPasses;
    Captured oursAtProbe;
    {
        AllocatorConfig config;
        config.expandableSegments = expandable;
        CudaDevice device(CudaDeviceOptions{});
        CountingSink sink;
        CachingAllocator allocator(config, device, &sink);
        bool failed = false;
        auto alloc = [&](std::uint64_t size) -> std::uint64_t {
            const std::optional<std::uint64_t> address = allocator.malloc(size, 0);
            if (!address) failed = true;
            return address.value_or(0);
        };
        auto release = [&](std::uint64_t address) {
            if (!allocator.free(address)) failed = true;
        };
        const double ns = bestOf(race, n, args.passes, alloc, release, [] {});
        if (failed) {
            std::printf("allocscope: FAILED (an allocation ran out of memory or a free was refused)\n");
            return 1;
        }
        rows.push_back({"allocscope", ns});
        oursAfterPasses = {allocator.stats(), allocator.segments()};
        probe(race, probeAt, alloc, release, [&] { oursAtProbe = {allocator.stats(), allocator.segments()}; });
        std::printf("allocscope events: total %llu alloc %llu free_completed %llu segment_alloc %llu segment_map %llu\n",
                    static_cast<unsigned long long>(sink.total()),
                    static_cast<unsigned long long>(sink.count(EventAction::Alloc)),
                    static_cast<unsigned long long>(sink.count(EventAction::FreeCompleted)),
                    static_cast<unsigned long long>(sink.count(EventAction::SegmentAlloc)),
                    static_cast<unsigned long long>(sink.count(EventAction::SegmentMap)));
        const CudaDeviceCounters& c = device.counters();
        std::printf("cuda device: cudaMalloc %llu cudaFree %llu reservations %llu pages mapped %llu unmapped %llu peak held %llu bytes\n",
                    static_cast<unsigned long long>(c.cudaMallocCalls), static_cast<unsigned long long>(c.cudaFreeCalls),
                    static_cast<unsigned long long>(c.reservations), static_cast<unsigned long long>(c.pagesMapped),
                    static_cast<unsigned long long>(c.pagesUnmapped), static_cast<unsigned long long>(c.peakHeldBytes));
        allocator.emptyCache();
    }
    writeStatsJson(args.statsDir, "allocscope_stats.json", oursAfterPasses.stats);

    {
        CudaRawCalls::keepDefaultPoolMemory(0);
        const double ns = bestOf(
            race, n, args.passes, [](std::uint64_t size) { return CudaRawCalls::mallocAsync(size).value_or(0); },
            [](std::uint64_t p) { CudaRawCalls::freeAsync(p); }, [] { CudaRawCalls::synchronize(); });
        rows.push_back({"cudaMallocAsync", ns});
        // The backend class on the same program: PyTorch's statistics for backend:cudaMallocAsync.
        CudaAsyncBackend backend(0);
        const CudaAsyncRunResult result = backend.run(race.program);
        const DeviceStats stats = backend.stats();
        std::printf("cudaMallocAsync backend: %llu allocs, %llu ooms; allocated_bytes.all.peak %lld reserved_bytes.all.peak %lld\n",
                    static_cast<unsigned long long>(result.allocs), static_cast<unsigned long long>(result.ooms),
                    static_cast<long long>(stats.allocated_bytes[kAggregate].peak),
                    static_cast<long long>(stats.reserved_bytes[kAggregate].peak));
        writeStatsJson(args.statsDir, "async_stats.json", stats);
        backend.emptyCache();
    }

    if (!args.skipMalloc) {
        const std::size_t few = std::min(args.mallocOps, n);
        std::vector<std::uint64_t> slots(race.idCount, 0);
        const double ns = timedPass(
            race, few, race.liveAfter(few), slots, [](std::uint64_t size) { return CudaRawCalls::malloc(size).value_or(0); },
            [](std::uint64_t p) { CudaRawCalls::free(p); });
        rows.push_back({"cudaMalloc (first " + std::to_string(few) + " ops)", ns});
    }

    double c10ns = 0;
    for (const Row& row : rows) {
        if (row.backend == "c10") c10ns = row.ns;
    }
    std::printf("%-32s %-26s %12s %14s\n", "backend", "config", "ns/op", "ratio_to_c10");
    for (const Row& row : rows) {
        char ratio[32] = "-";
        if (c10ns > 0) std::snprintf(ratio, sizeof ratio, "%.3f", row.ns / c10ns);
        std::printf("%-32s %-26s %12.1f %14s\n", row.backend.c_str(), configName.c_str(), row.ns, ratio);
    }

#ifdef ALLOCSCOPE_WITH_C10
    writeStatsJson(args.statsDir, "c10_stats.json", c10AfterPasses.stats);
    const std::string s1 = compareStats(oursAfterPasses.stats, c10AfterPasses.stats);
    const std::string l1 = compareLayouts(oursAfterPasses.segments, c10AfterPasses.segments);
    const std::string s2 = compareStats(oursAtProbe.stats, c10AtProbe.stats);
    const std::string l2 = compareLayouts(oursAtProbe.segments, c10AtProbe.segments);
    std::printf("stats after passes: %s\nlayout after passes: %s\n", s1.c_str(), l1.c_str());
    std::printf("stats at op %zu: %s\nlayout at op %zu: %s\n", probeAt, s2.c_str(), probeAt, l2.c_str());
    if (!args.smoke && c10ns > 0) {
        for (const Row& row : rows) {
            if (row.backend == "allocscope") {
                std::printf("target allocscope <= 0.5 x c10: %s\n", row.ns <= 0.5 * c10ns ? "MET" : "NOT MET");
            }
        }
    }
#else
    std::printf("c10: not built in (configure with -DALLOCSCOPE_WITH_C10=ON); no stats/layout comparison\n");
#endif
    std::printf("last CUDA error: %s\n", CudaRawCalls::lastError().c_str());
    return 0;
}

#endif  // ALLOCSCOPE_HAVE_CUDA

}  // namespace

int main(int argc, char** argv) {
    Args args;
    if (!parseArgs(argc, argv, args)) return 2;
    // The configuration both allocators run under: c10 reads this variable itself.
    const char* env = std::getenv("PYTORCH_CUDA_ALLOC_CONF");
    const std::string conf = env != nullptr ? env : "";
    bool expandable = false;
    if (conf == "expandable_segments:True") {
        expandable = true;
    } else if (!conf.empty()) {
        std::fprintf(stderr, "bench_gpu_race: PYTORCH_CUDA_ALLOC_CONF='%s' is not raced (use '' or expandable_segments:True)\n",
                     conf.c_str());
        return 2;
    }
    const std::string configName = expandable ? "expandable_segments:True" : "default";
#ifdef ALLOCSCOPE_HAVE_CUDA
    if (auto reason = CudaDevice::unavailableReason(0)) {
        std::printf("%s\n", reason->c_str());
        if (args.smoke) {
            // Without a GPU the smoke run still checks the op sequence is well formed.
            const RaceOps race = makeRaceOps(args.ops);
            std::printf("op sequence: %zu ops, %u tensors, %zu live at the end\n", race.ops.size(), race.idCount,
                        race.liveAfter(race.ops.size()).size());
        }
        return 0;
    }
    try {
        return race(args, configName, expandable);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "bench_gpu_race: %s\n", error.what());
        return 1;
    }
#else
    std::printf("no GPU: built without CUDA support (config %s)\n", configName.c_str());
    return 0;
#endif
}
