#pragma once
// The GPU race's operation sequences in the compact form its timed loops walk (16 bytes an op,
// tensor ids dense from 0), so every backend replays exactly the same operations:
//   anchor     the allocator-core benchmark's sequence (AllocBenchSequence.h), default stream;
//   train_gpt  the alloc/free ops of a recorded training trace in trace order, repeated (each
//              repetition frees what it left live, so repetitions do not pile up);
//   two_stream a seeded mix on two streams where some blocks are used on the other stream
//              (record_stream), so their frees stay pending until that stream's event completes.
// Header-only: used by tests/benchmarks/bench_gpu_race.cpp, compiled with or without CUDA.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/core/Op.h"
#include "allocator/replay/RecordedTrace.h"
#include "storage/import/TraceImport.h"
#include "tests/benchmarks/AllocBenchSequence.h"

namespace allocscope::gpu {

enum class RaceKind : std::uint8_t {
    Alloc,         // slots[id] = alloc(size) on stream `stream`
    Free,          // free(slots[id])
    RecordStream,  // record_stream(slots[id], stream `stream`)
    Release,       // the use streams run on: every event recorded so far completes (not timed)
};

struct RaceOp {
    std::uint64_t size = 0;  // alloc: requested bytes
    std::uint32_t id = 0;    // dense tensor id: index into the loop's pointer table
    RaceKind kind = RaceKind::Alloc;
    std::uint8_t stream = 0;  // 0: the default stream; 1, 2: the race's two real streams
};

// The sequence names of a --sequences argument: "anchor,two_stream" -> {anchor, two_stream}
// (empty names between commas are skipped).
inline std::vector<std::string> raceSequenceNames(const std::string& text) {
    std::vector<std::string> names;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        if (comma > start) names.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return names;
}

struct RaceOps {
    std::string name;
    alloc::Program program;  // anchor only: the same ops as a Program (CudaAsyncBackend::run)
    std::vector<RaceOp> ops;
    std::uint32_t idCount = 0;
    bool streams = false;  // uses streams 1 and 2 (record_stream, pending frees)

    // Ids live after the first `count` ops, ascending: what a pass frees at its end.
    std::vector<std::uint32_t> liveAfter(std::size_t count) const {
        std::vector<bool> live(idCount, false);
        for (std::size_t i = 0; i < count && i < ops.size(); ++i) {
            if (ops[i].kind == RaceKind::Alloc) live[ops[i].id] = true;
            if (ops[i].kind == RaceKind::Free) live[ops[i].id] = false;
        }
        std::vector<std::uint32_t> ids;
        for (std::uint32_t id = 0; id < idCount; ++id) {
            if (live[id]) ids.push_back(id);
        }
        return ids;
    }
    // Operations a pass times: everything but Release.
    std::size_t timedOps(std::size_t count) const {
        std::size_t n = 0;
        for (std::size_t i = 0; i < count && i < ops.size(); ++i) n += ops[i].kind != RaceKind::Release ? 1 : 0;
        return n;
    }
};

// Keeps a Program's Alloc and Free ops (the only ones the anchor race times); ids renumbered densely.
inline RaceOps raceOpsFromProgram(alloc::Program program) {
    RaceOps race;
    std::unordered_map<std::uint64_t, std::uint32_t> dense;
    for (const alloc::Op& op : program.ops) {
        if (op.kind == alloc::OpKind::Alloc) {
            const std::uint32_t id = race.idCount++;
            dense[op.id] = id;
            race.ops.push_back({op.size, id, RaceKind::Alloc, 0});
        } else if (op.kind == alloc::OpKind::Free) {
            auto it = dense.find(op.id);
            if (it != dense.end()) race.ops.push_back({0, it->second, RaceKind::Free, 0});
        }
    }
    race.program = std::move(program);
    return race;
}

// The allocator-core benchmark's sequence (tests/benchmarks/AllocBenchSequence.h, the size mix
// of PyTorch's anchor benchmark), as a Program: BenchOp's victim indexes the live list with
// swap-with-last removal, which becomes a free of that tensor's id.
inline alloc::Program benchSequenceProgram(std::size_t count) {
    alloc::Program program;
    program.ops.reserve(count);
    std::vector<std::uint64_t> live;
    std::uint64_t nextId = 1;
    for (const bench::BenchOp& op : bench::makeBenchSequence(count)) {
        if (op.alloc) {
            program.ops.push_back(alloc::Op::alloc(nextId, op.size));
            live.push_back(nextId++);
        } else {
            program.ops.push_back(alloc::Op::free(live[op.victim]));
            live[op.victim] = live.back();
            live.pop_back();
        }
    }
    return program;
}

inline RaceOps makeRaceOps(std::size_t count) {
    RaceOps race = raceOpsFromProgram(benchSequenceProgram(count));
    race.name = "anchor";
    return race;
}

// A trace's alloc / free_requested entries in trace order (every stream raced on the default
// one), repeated until at least `count` ops. A free of a block allocated before the trace began
// (a ring buffer that overflowed) is skipped; each repetition ends by freeing what it left live.
inline RaceOps raceOpsFromTrace(const alloc::RecordedTrace& trace, std::size_t count, std::string name) {
    RaceOps race;
    race.name = std::move(name);
    bool any = false;
    for (const alloc::RecordedEntry& entry : trace.entries) any = any || entry.action == alloc::EventAction::Alloc;
    if (!any) return race;
    while (race.ops.size() < count) {
        std::unordered_map<std::uint64_t, std::uint32_t> live;  // address -> dense id
        std::vector<std::uint32_t> order;                       // alloc order, for the leftovers
        for (const alloc::RecordedEntry& entry : trace.entries) {
            if (entry.action == alloc::EventAction::Alloc && entry.size > 0) {
                const std::uint32_t id = race.idCount++;
                live[entry.address] = id;
                order.push_back(id);
                race.ops.push_back({entry.size, id, RaceKind::Alloc, 0});
            } else if (entry.action == alloc::EventAction::FreeRequested) {
                auto it = live.find(entry.address);
                if (it == live.end()) continue;
                race.ops.push_back({0, it->second, RaceKind::Free, 0});
                live.erase(it);
            }
        }
        std::vector<bool> left(race.idCount, false);
        for (const auto& [address, id] : live) left[id] = true;
        for (std::uint32_t id : order) {
            if (left[id]) race.ops.push_back({0, id, RaceKind::Free, 0});
        }
    }
    return race;
}

// The train_gpt sequence's trace when --trace is not given: $ALLOCSCOPE_TEST_DATA (or tests/data)
// /traces/train_gpt__default.pickle.
inline std::string defaultRaceTracePath() {
    const char* data = std::getenv("ALLOCSCOPE_TEST_DATA");
    return std::string(data != nullptr ? data : "tests/data") + "/traces/train_gpt__default.pickle";
}

// The train_gpt sequence: raceOpsFromTrace() of the first device's trace in the file at `path`.
// Throws (formats::FormatError, std::runtime_error) saying what is wrong with the file.
inline RaceOps trainGptRaceOps(const std::string& path, std::size_t count) {
    const std::vector<alloc::RecordedTrace> traces = storage::importTraceFile(path);
    if (traces.empty()) throw std::runtime_error("no device trace in it");
    RaceOps race = raceOpsFromTrace(traces.front(), count, "train_gpt");
    if (race.ops.empty()) throw std::runtime_error("no allocations in its trace");
    return race;
}

// Two streams: each allocation on stream 1 or 2 (even odds), the anchor's size mix, at most 400
// live tensors and 6 GiB; 30% of allocations are then used on the other stream (record_stream),
// so their free stays pending until the event recorded there completes. After every 64
// allocations and frees (an allocation's record_stream rides along) the streams run on (Release):
// the events recorded before it complete, the ones after it cannot yet. So
// which frees are still pending at each malloc is the same in every run and every backend.
inline RaceOps makeTwoStreamOps(std::size_t count, std::uint64_t seed = bench::kBenchSeed ^ 0x5157ull) {
    RaceOps race;
    race.name = "two_stream";
    race.streams = true;
    bench::SplitMix64 rng(seed);
    std::vector<std::uint32_t> live;
    std::vector<std::uint64_t> liveSizes;
    std::uint64_t liveBytes = 0;
    race.ops.reserve(count + count / 32);
    std::size_t sinceRelease = 0;
    while (race.ops.size() < count) {
        if (++sinceRelease == 64) {
            race.ops.push_back({0, 0, RaceKind::Release, 0});
            sinceRelease = 0;
        }
        const bool canAlloc = live.size() < bench::kBenchMaxLive && liveBytes < bench::kBenchMaxLiveBytes;
        if (live.empty() || (canAlloc && rng.unit() < 0.5)) {
            const std::uint64_t size = bench::anchorSize(rng);
            const std::uint8_t stream = rng.unit() < 0.5 ? 1 : 2;
            const std::uint32_t id = race.idCount++;
            race.ops.push_back({size, id, RaceKind::Alloc, stream});
            if (rng.unit() < 0.3) {
                race.ops.push_back({0, id, RaceKind::RecordStream, static_cast<std::uint8_t>(3 - stream)});
            }
            live.push_back(id);
            liveSizes.push_back(size);
            liveBytes += size;
        } else {
            const auto victim = static_cast<std::size_t>(rng.next() % live.size());
            race.ops.push_back({0, live[victim], RaceKind::Free, 0});
            liveBytes -= liveSizes[victim];
            live[victim] = live.back();
            live.pop_back();
            liveSizes[victim] = liveSizes.back();
            liveSizes.pop_back();
        }
    }
    return race;
}

}  // namespace allocscope::gpu
