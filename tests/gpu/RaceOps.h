#pragma once
// The GPU race's operation sequence in the compact form its timed loops walk (16 bytes an op,
// tensor ids dense from 0), built from a Program so every backend replays exactly the same
// alloc/free sequence. Header-only: used by tests/benchmarks/bench_gpu_race.cpp and the GPU
// checks, compiled with or without CUDA.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "allocator/core/Op.h"
#include "tests/benchmarks/AllocBenchSequence.h"

namespace allocscope::gpu {

struct RaceOp {
    std::uint64_t size = 0;  // alloc: requested bytes
    std::uint32_t id = 0;    // dense tensor id: index into the loop's pointer table
    bool alloc = false;
};

struct RaceOps {
    alloc::Program program;     // the same ops as a Program (CudaAsyncBackend::run and friends)
    std::vector<RaceOp> ops;
    std::uint32_t idCount = 0;

    // Ids live after the first `count` ops, ascending: what a pass frees at its end.
    std::vector<std::uint32_t> liveAfter(std::size_t count) const {
        std::vector<bool> live(idCount, false);
        for (std::size_t i = 0; i < count && i < ops.size(); ++i) live[ops[i].id] = ops[i].alloc;
        std::vector<std::uint32_t> ids;
        for (std::uint32_t id = 0; id < idCount; ++id) {
            if (live[id]) ids.push_back(id);
        }
        return ids;
    }
};

// Keeps a Program's Alloc and Free ops (the only ones the race times); ids are renumbered densely.
inline RaceOps raceOpsFromProgram(alloc::Program program) {
    RaceOps race;
    std::unordered_map<std::uint64_t, std::uint32_t> dense;
    for (const alloc::Op& op : program.ops) {
        if (op.kind == alloc::OpKind::Alloc) {
            const std::uint32_t id = race.idCount++;
            dense[op.id] = id;
            race.ops.push_back({op.size, id, true});
        } else if (op.kind == alloc::OpKind::Free) {
            auto it = dense.find(op.id);
            if (it != dense.end()) race.ops.push_back({0, it->second, false});
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

inline RaceOps makeRaceOps(std::size_t count) { return raceOpsFromProgram(benchSequenceProgram(count)); }

}  // namespace allocscope::gpu
