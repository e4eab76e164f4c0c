// The speed race on a real GPU. Three op sequences (tests/gpu/RaceOps.h): anchor (the
// allocator-core benchmark's mix, AllocBenchSequence.h), train_gpt (the alloc/free ops of a real
// training trace, repeated) and two_stream (two streams, record_stream, pending frees), each
// replayed through
//   - PyTorch's c10 CUDA caching allocator (built with -DALLOCSCOPE_WITH_C10, see gpu.cmake),
//   - AllocScope's CachingAllocator on CudaDevice (real device pointers, statistics kept, a
//     CountingSink attached; real events for two_stream),
//   - the same allocator on SimulatedDevice (the baseline: what the allocator costs without CUDA),
// under the configuration in PYTORCH_CUDA_ALLOC_CONF ("" or expandable_segments:True; c10 reads
// the same variable). Passes are interleaved (c10, ours, simulated, c10, ...) so that drift in
// the host hits all three alike: one warm pass each, then --passes timed passes each; a pass also
// frees what is still live at its end, as PyTorch's anchor benchmark does. Nothing is touched
// inside the timed loops. Printed per backend: best and median pass (ns/op) and their ratio to
// c10's, as RESULT lines that tests/gpu/run_race.sh collects.
//
// After the passes (and one more untimed pass each, the instrumented one below), and again in the middle of the sequence (after --probe-ops ops, default
// half), AllocScope's statistics (all 122 keys) and segment/block layout (sizes, states, streams,
// order; addresses aside) must equal c10's: printed as MATCH or the first difference.
//
// Then one instrumented pass of AllocScope on each device says where its time goes (allocator
// calls, event record, event poll, device calls), and the CUDA device's own timers give the time
// inside its segment calls over the whole sequence. cudaMallocAsync / cudaMalloc rows: anchor
// only, once (they are slow), unless --skip-malloc.
//
// The layout check compares segments in a canonical order (RaceCompare.h: canonicalOrder), since
// the allocators draw from one driver at once and it may place their segments in a different
// address order; the address-order comparison is printed too, for information.
//
//   bench_gpu_race [--smoke] [--ops N] [--passes P] [--malloc-ops M] [--probe-ops K]
//                  [--stats-dir DIR] [--skip-malloc] [--trace PICKLE] [--sequences a,b,c]
//                  [--blocked]
//   --smoke: tiny sequences, no timing claims; prints "no GPU" and exits 0 without a GPU.
//   --trace: the train_gpt trace (default $ALLOCSCOPE_TEST_DATA/traces/train_gpt__default.pickle,
//            tests/data/traces/... when that variable is unset).
//   --stats-dir: writes SEQ_allocscope_stats.json / SEQ_c10_stats.json / async_stats.json (flat
//                {"key": value}) for tests/gpu/compare_stats.py.
//   --blocked: each backend's passes one after another instead of interleaved.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/device/SimulatedDevice.h"
#include "tests/gpu/FlatStatsJson.h"
#include "tests/gpu/RaceCompare.h"
#include "tests/gpu/RaceOps.h"
#include "tests/gpu/RaceSides.h"

#ifdef ALLOCSCOPE_HAVE_CUDA
#include "allocator/device/cuda/CudaAsyncBackend.h"
#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaRawCalls.h"
#include "allocator/device/cuda/StreamFreeQueue.h"
#include "tests/gpu/RaceStreams.h"
#include "tests/gpu/StreamFreeSelfTest.h"
#endif
#ifdef ALLOCSCOPE_WITH_C10
#include "tests/gpu/C10Backend.h"
#endif

using namespace allocscope::alloc;
using namespace allocscope::gpu;

namespace {

struct Args {
    bool smoke = false;
    std::size_t ops = 1'000'000;
    int passes = 5;
    std::size_t mallocOps = 20'000;
    std::size_t probeOps = 0;  // 0: half the sequence
    std::string statsDir;
    bool skipMalloc = false;
    bool blocked = false;
    std::string trace;  // empty: $ALLOCSCOPE_TEST_DATA (or tests/data)/traces/train_gpt__default.pickle
    std::vector<std::string> sequences = {"anchor", "train_gpt", "two_stream", "two_stream_events"};
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
        } else if (arg == "--trace" && i + 1 < argc) {
            args.trace = argv[++i];
        } else if (arg == "--sequences" && i + 1 < argc) {
            args.sequences = raceSequenceNames(argv[++i]);
        } else if (arg == "--skip-malloc") {
            args.skipMalloc = true;
        } else if (arg == "--blocked") {
            args.blocked = true;
        } else {
            std::fprintf(stderr, "bench_gpu_race: bad argument '%s'\n", arg.c_str());
            return false;
        }
    }
    for (const std::string& name : args.sequences) {
        if (name != "anchor" && name != "train_gpt" && !twoStreamMarking(name)) {
            std::fprintf(stderr,
                         "bench_gpu_race: unknown sequence '%s' (anchor, train_gpt, two_stream, two_stream_events, "
                         "two_stream_ctr, two_stream_drv, two_stream_drvtail)\n",
                         name.c_str());
            return false;
        }
    }
    if (args.trace.empty()) args.trace = defaultRaceTracePath();
    if (args.smoke) {
        args.ops = 2'000;
        args.passes = 1;
        args.mallocOps = 200;
    }
    return true;
}

// The named sequence with `ops` operations; nullopt (after saying why) if its input is unreadable.
[[maybe_unused]] std::optional<RaceOps> buildSequence(const std::string& name, const Args& args) {
    if (name == "anchor") return makeRaceOps(args.ops);
    if (twoStreamMarking(name)) {
        RaceOps race = makeTwoStreamOps(args.ops);
        race.name = name;
        return race;
    }
    try {
        return trainGptRaceOps(args.trace, args.ops);
    } catch (const std::exception& error) {
        std::printf("sequence train_gpt: cannot read %s: %s (skipped)\n", args.trace.c_str(), error.what());
        return std::nullopt;
    }
}

[[maybe_unused]] void writeStatsJson(const std::string& dir, const std::string& name, const DeviceStats& stats) {
    if (dir.empty()) return;
    const std::string path = dir + "/" + name;
    if (!writeFlatStatsJson(path, stats)) std::fprintf(stderr, "bench_gpu_race: cannot write %s\n", path.c_str());
}

#ifdef ALLOCSCOPE_HAVE_CUDA

struct Captured {
    DeviceStats stats;
    std::vector<SegmentInfo> segments;
};

#ifdef ALLOCSCOPE_WITH_C10
class C10Side {
public:
    C10Side(C10Backend& c10, RaceStreams& streams) : c10_(c10), streams_(streams) {}
    std::uint64_t alloc(std::uint64_t size, std::uint8_t stream) {
        return stream == 0 ? c10_.allocate(size) : c10_.allocate(size, streams_.handle(stream));
    }
    void free(std::uint64_t pointer, std::uint8_t /*useStream*/) { c10_.release(pointer); }
    void recordStream(std::uint64_t pointer, std::uint8_t stream) { c10_.recordStream(pointer, streams_.handle(stream)); }
    void release() {
        streams_.release();
        streams_.hold();
    }
    void beginPass(bool useStreams) {
        if (useStreams) streams_.hold();
    }
    void endPass() { streams_.release(); }

private:
    C10Backend& c10_;
    RaceStreams& streams_;
};
#endif

// Everything that lives for the whole process: the three allocators and their devices.
struct Contest {
    CudaDevice cuda{CudaDeviceOptions{0, false, nullptr, true}};
    CountingSink cudaSink;
    CachingAllocator ours;
    // One pending-free queue per two_stream marking (twoStreamMarking), made when first raced.
    std::map<StreamFreeQueue::Marking, std::unique_ptr<StreamFreeQueue>> completions;
    SimulatedDevice sim;
    CountingSink simSink;
    CachingAllocator simulated;
    SimulatedEvents simEvents;
#ifdef ALLOCSCOPE_WITH_C10
    C10Backend pytorch;
#endif
    // Last, so that it goes first: held streams are released before anything waits for the
    // device (CudaDevice's cudaFree would wait for a held stream forever).
    RaceStreams streams{0};
    std::uint64_t handles[3] = {0, 0, 0};

    explicit Contest(const AllocatorConfig& config)
        : ours(config, cuda, &cudaSink), sim(cuda.totalMemory(), 0, "simulated " + cuda.name()),
          simulated(config, sim, &simSink) {
        handles[1] = streams.handle(1);
        handles[2] = streams.handle(2);
    }
};

std::string ratioText(double ns, double c10ns) {
    if (c10ns <= 0) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", ns / c10ns);
    return text;
}

// One sequence: interleaved passes, fidelity checks, breakdown. Returns false on a failure.
bool raceSequence(Contest& contest, const RaceOps& race, const Args& args, const std::string& configName) {
    const std::size_t n = race.ops.size();
    const std::size_t probeAt = std::min(args.probeOps == 0 ? n / 2 : args.probeOps, n);
    const std::vector<std::uint32_t> leftover = race.liveAfter(n);
    std::vector<std::uint8_t> uses(race.idCount, 0);
    std::printf("sequence %s: %zu ops (%zu timed), %u tensors, passes %d, config %s%s\n", race.name.c_str(), n,
                race.timedOps(n), race.idCount, args.passes, configName.c_str(), args.smoke ? " (smoke: no timing claims)" : "");

    // How AllocScope's side learns that a use stream has passed a free (StreamFreeQueue.h).
    const StreamFreeQueue::Marking wanted = twoStreamMarking(race.name).value_or(StreamFreeQueue::Marking::Events);
    std::unique_ptr<StreamFreeQueue>& queue = contest.completions[wanted];
    if (!queue) queue = std::make_unique<StreamFreeQueue>(0, wanted);
    StreamFreeQueue& completions = *queue;
    AllocScopeSide<StreamFreeQueue> ours(contest.ours, completions, &contest.streams, contest.handles);
    if (race.streams) {
        std::printf("sequence %s: AllocScope learns of passed frees by %s%s\n", race.name.c_str(),
                    StreamFreeQueue::describe(completions.marking()),
                    completions.marking() != wanted ? " (fallback: the wanted marking is missing here)" : "");
    }
    AllocScopeSide<SimulatedEvents> sim(contest.simulated, contest.simEvents, nullptr, contest.handles);
    std::vector<std::uint64_t> oursSlots(race.idCount, 0), simSlots(race.idCount, 0);
    PassTimes oursTimes, simTimes;
    const CudaDeviceCounters before = contest.cuda.counters();
    auto nothing = [] {};
    auto oursPass = [&] { return racePass(race, n, leftover, oursSlots, uses, ours, nothing); };
    auto simPass = [&] { return racePass(race, n, leftover, simSlots, uses, sim, nothing); };
#ifdef ALLOCSCOPE_WITH_C10
    C10Side c10(contest.pytorch, contest.streams);
    std::vector<std::uint64_t> c10Slots(race.idCount, 0);
    PassTimes c10Times;
    auto c10Pass = [&] { return racePass(race, n, leftover, c10Slots, uses, c10, nothing); };
#else
    PassTimes c10Times;
    auto c10Pass = [] { return 0.0; };
#endif
    // Round 0 warms every side up (segments created, caches filled) and is not counted.
    if (args.blocked) {
        for (int round = 0; round <= args.passes; ++round) {
            const double ns = c10Pass();
            if (round > 0) c10Times.ns.push_back(ns);
        }
        for (int round = 0; round <= args.passes; ++round) {
            const double ns = oursPass();
            if (round > 0) oursTimes.ns.push_back(ns);
        }
        for (int round = 0; round <= args.passes; ++round) {
            const double ns = simPass();
            if (round > 0) simTimes.ns.push_back(ns);
        }
    } else {
        for (int round = 0; round <= args.passes; ++round) {
            const double a = c10Pass();
            const double b = oursPass();
            const double c = simPass();
            if (round == 0) continue;
            c10Times.ns.push_back(a);
            oursTimes.ns.push_back(b);
            simTimes.ns.push_back(c);
        }
    }
#ifndef ALLOCSCOPE_WITH_C10
    c10Times.ns.clear();
#endif
    if (ours.failed || sim.failed) {
        std::printf("sequence %s: FAILED (an allocation ran out of memory or a free was refused: cuda %d, simulated %d)\n",
                    race.name.c_str(), ours.failed ? 1 : 0, sim.failed ? 1 : 0);
        return false;
    }

    // Where the time goes: one instrumented pass each (clock reads around every call add to it).
    AllocScopeSide<StreamFreeQueue, true> oursTimed(contest.ours, completions, &contest.streams, contest.handles);
    AllocScopeSide<SimulatedEvents, true> simTimed(contest.simulated, contest.simEvents, nullptr, contest.handles);
    const StreamFreeCounters eventsBefore = completions.counters();
    const double oursInstrumented = racePass(race, n, leftover, oursSlots, uses, oursTimed, nothing);
    const double simInstrumented = racePass(race, n, leftover, simSlots, uses, simTimed, nothing);
#ifdef ALLOCSCOPE_WITH_C10
    racePass(race, n, leftover, c10Slots, uses, c10, nothing);  // c10's history stays the same as ours
#endif
    const StreamFreeCounters& events = completions.counters();
    const CudaDeviceCounters& after = contest.cuda.counters();

    // Fidelity: after the passes, then in the middle of the sequence.
    Captured oursAfter{contest.ours.stats(), contest.ours.segments()};
    Captured oursProbe;
    racePass(race, probeAt, race.liveAfter(probeAt), oursSlots, uses, ours,
             [&] { oursProbe = {contest.ours.stats(), contest.ours.segments()}; });
    writeStatsJson(args.statsDir, race.name + "_allocscope_stats.json", oursAfter.stats);
#ifdef ALLOCSCOPE_WITH_C10
    Captured c10After{contest.pytorch.stats(), contest.pytorch.segments()};
    Captured c10Probe;
    racePass(race, probeAt, race.liveAfter(probeAt), c10Slots, uses, c10,
             [&] { c10Probe = {contest.pytorch.stats(), contest.pytorch.segments()}; });
    writeStatsJson(args.statsDir, race.name + "_c10_stats.json", c10After.stats);
#endif

    const double timed = static_cast<double>(race.timedOps(n) + leftover.size());
    const double c10Best = c10Times.best();
    const double c10Median = c10Times.median();
    std::printf("%-7s %-11s %-26s %-11s %10s %10s %10s %12s\n", "RESULT", "sequence", "config", "backend", "best_ns",
                "median_ns", "ratio_best", "ratio_median");
    auto row = [&](const char* backend, const PassTimes& t) {
        std::printf("%-7s %-11s %-26s %-11s %10.1f %10.1f %10s %12s\n", "RESULT", race.name.c_str(), configName.c_str(), backend,
                    t.best(), t.median(), ratioText(t.best(), c10Best).c_str(), ratioText(t.median(), c10Median).c_str());
    };
    if (!c10Times.ns.empty()) row("c10", c10Times);
    row("allocscope", oursTimes);
    row("simulated", simTimes);
    auto perOp = [&](std::uint64_t ns) { return static_cast<double>(ns) / timed; };
    const SideTimes& marks = oursTimed.times;
    auto count = [](std::uint64_t value) { return static_cast<unsigned long long>(value); };
    std::printf("breakdown %s cuda: instrumented pass %.1f ns/op = allocator calls %.1f + record %.1f (%llu events, %llu counter "
                "writes) + poll %.1f (%llu event queries, %llu counter reads) + pending completions %.1f + loop rest\n",
                race.name.c_str(), oursInstrumented, perOp(marks.allocatorNs), perOp(marks.insertNs),
                count(events.eventsRecorded - eventsBefore.eventsRecorded), count(events.countersWritten - eventsBefore.countersWritten),
                perOp(marks.pollNs - marks.completeNs), count(events.eventQueries - eventsBefore.eventQueries),
                count(events.counterReads - eventsBefore.counterReads), perOp(marks.completeNs));
    std::printf("breakdown %s simulated: instrumented pass %.1f ns/op = allocator calls %.1f + loop rest\n", race.name.c_str(),
                simInstrumented, perOp(simTimed.times.allocatorNs));
    // AllocScope on CUDA ran the warm pass, the timed ones, the probe (part of one) and the instrumented one.
    const double allOps = timed * (args.passes + 2.0) + static_cast<double>(race.timedOps(probeAt));
    std::printf("cuda device calls %s: %llu calls, %.1f us in all (%.3f ns/op over all its passes): cudaMalloc %.1f us, "
                "cudaFree %.1f us, reserve %.1f us, map %.1f us, unmap %.1f us; %llu cudaMalloc, %llu pages mapped\n",
                race.name.c_str(), static_cast<unsigned long long>(after.deviceCalls - before.deviceCalls),
                (after.deviceCallNs - before.deviceCallNs) / 1e3, static_cast<double>(after.deviceCallNs - before.deviceCallNs) / allOps,
                (after.cudaMallocNs - before.cudaMallocNs) / 1e3, (after.cudaFreeNs - before.cudaFreeNs) / 1e3,
                (after.reserveNs - before.reserveNs) / 1e3, (after.mapNs - before.mapNs) / 1e3, (after.unmapNs - before.unmapNs) / 1e3,
                static_cast<unsigned long long>(after.cudaMallocCalls - before.cudaMallocCalls),
                static_cast<unsigned long long>(after.pagesMapped - before.pagesMapped));

    bool ok = true;
#ifdef ALLOCSCOPE_WITH_C10
    const std::string checks[4] = {
        compareStats(oursAfter.stats, c10After.stats),
        compareLayouts(canonicalOrder(oursAfter.segments), canonicalOrder(c10After.segments)),
        compareStats(oursProbe.stats, c10Probe.stats),
        compareLayouts(canonicalOrder(oursProbe.segments), canonicalOrder(c10Probe.segments))};
    std::printf("CHECK %s %s stats after passes: %s\n", race.name.c_str(), configName.c_str(), checks[0].c_str());
    std::printf("CHECK %s %s layout after passes: %s\n", race.name.c_str(), configName.c_str(), checks[1].c_str());
    std::printf("CHECK %s %s stats at op %zu: %s\n", race.name.c_str(), configName.c_str(), probeAt, checks[2].c_str());
    std::printf("CHECK %s %s layout at op %zu: %s\n", race.name.c_str(), configName.c_str(), probeAt, checks[3].c_str());
    for (const std::string& check : checks) ok = ok && check.rfind("MATCH", 0) == 0;
    // Information only: the same layouts in address order (where the driver put the segments).
    std::printf("address order %s %s after passes: %s; at op %zu: %s\n", race.name.c_str(), configName.c_str(),
                compareLayouts(oursAfter.segments, c10After.segments).c_str(), probeAt,
                compareLayouts(oursProbe.segments, c10Probe.segments).c_str());
    contest.pytorch.emptyCache();
#else
    std::printf("c10: not built in (configure with -DALLOCSCOPE_WITH_C10=ON); no stats/layout comparison\n");
#endif
    ours.emptyCache();
    sim.emptyCache();
    return ok;
}

// cudaMallocAsync and cudaMalloc on the anchor sequence: once, untimed warm-up aside.
void slowRows(const RaceOps& race, const Args& args, const std::string& configName) {
    const std::size_t n = race.ops.size();
    std::vector<std::uint64_t> slots(race.idCount, 0);
    auto pass = [&](std::size_t count, auto alloc, auto release) {
        const std::vector<std::uint32_t> leftover = race.liveAfter(count);
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < count; ++i) {
            const RaceOp& op = race.ops[i];
            if (op.kind == RaceKind::Alloc) slots[op.id] = alloc(op.size);
            if (op.kind == RaceKind::Free) release(slots[op.id]);
        }
        for (std::uint32_t id : leftover) release(slots[id]);
        const auto stop = std::chrono::steady_clock::now();
        return std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(count + leftover.size());
    };
    CudaRawCalls::keepDefaultPoolMemory(0);
    auto asyncAlloc = [](std::uint64_t size) { return CudaRawCalls::mallocAsync(size).value_or(0); };
    auto asyncFree = [](std::uint64_t p) { CudaRawCalls::freeAsync(p); };
    pass(n, asyncAlloc, asyncFree);
    CudaRawCalls::synchronize();
    const double asyncNs = pass(n, asyncAlloc, asyncFree);
    CudaRawCalls::synchronize();
    std::printf("SLOW anchor %s cudaMallocAsync %.1f ns/op (one pass after a warm one)\n", configName.c_str(), asyncNs);
    CudaAsyncBackend backend(0);
    const CudaAsyncRunResult result = backend.run(race.program);
    writeStatsJson(args.statsDir, "async_stats.json", backend.stats());
    std::printf("cudaMallocAsync backend: %llu allocs, %llu ooms\n", static_cast<unsigned long long>(result.allocs),
                static_cast<unsigned long long>(result.ooms));
    backend.emptyCache();
    const std::size_t few = std::min(args.mallocOps, n);
    const double mallocNs = pass(
        few, [](std::uint64_t size) { return CudaRawCalls::malloc(size).value_or(0); }, [](std::uint64_t p) { CudaRawCalls::free(p); });
    std::printf("SLOW anchor %s cudaMalloc %.1f ns/op (first %zu ops)\n", configName.c_str(), mallocNs, few);
}

int race(const Args& args, const std::string& configName, bool expandable) {
    CudaRawCalls::setDevice(0);
    AllocatorConfig config;
    config.expandableSegments = expandable;
    Contest contest(config);
    std::printf("device %s config %s passes %d order %s\n", CudaRawCalls::deviceName(0).c_str(), configName.c_str(), args.passes,
                args.blocked ? "blocked" : "interleaved");
#ifdef ALLOCSCOPE_WITH_C10
    std::printf("c10 allocator: %s\n", contest.pytorch.name().c_str());
#endif
    bool ok = true;
    // The product's pending-free queue on the race's streams, every marking (StreamFreeSelfTest.h).
    using Marking = StreamFreeQueue::Marking;
    for (Marking m : {Marking::Events, Marking::DriverEvents, Marking::DriverEventsTail, Marking::Counters, Marking::Mixed}) {
        const std::string failure = streamFreeQueueSelfTest(contest.streams, m);
        std::printf("selftest stream free queue, %s: %s\n", StreamFreeQueue::describe(m), failure.empty() ? "ok" : failure.c_str());
        ok = ok && failure.empty();
    }
    for (const std::string& name : args.sequences) {
        const std::optional<RaceOps> race = buildSequence(name, args);
        if (!race) {
            ok = false;
            continue;
        }
        ok = raceSequence(contest, *race, args, configName) && ok;
        if (name == "anchor" && !args.skipMalloc) slowRows(*race, args, configName);
    }
    std::printf("allocscope events: total %llu; cuda device: cudaMalloc %llu cudaFree %llu reservations %llu pages mapped %llu "
                "unmapped %llu peak held %llu bytes\n",
                static_cast<unsigned long long>(contest.cudaSink.total()),
                static_cast<unsigned long long>(contest.cuda.counters().cudaMallocCalls),
                static_cast<unsigned long long>(contest.cuda.counters().cudaFreeCalls),
                static_cast<unsigned long long>(contest.cuda.counters().reservations),
                static_cast<unsigned long long>(contest.cuda.counters().pagesMapped),
                static_cast<unsigned long long>(contest.cuda.counters().pagesUnmapped),
                static_cast<unsigned long long>(contest.cuda.counters().peakHeldBytes));
    std::printf("last CUDA error: %s\n", CudaRawCalls::lastError().c_str());
    return ok ? 0 : 1;
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
            // Without a GPU the smoke run still checks that the op sequences are well formed.
            for (const std::string& name : args.sequences) {
                if (const std::optional<RaceOps> race = buildSequence(name, args)) {
                    std::printf("op sequence %s: %zu ops, %u tensors, %zu live at the end\n", race->name.c_str(), race->ops.size(),
                                race->idCount, race->liveAfter(race->ops.size()).size());
                }
            }
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
