#pragma once
// The GPU race's operation sequence in the compact form its timed loops walk (16 bytes an op,
// tensor ids dense from 0), built from a Program so every backend replays exactly the same
// alloc/free sequence. Header-only: used by tests/benchmarks/bench_gpu_race.cpp and the GPU
// checks, compiled with or without CUDA.
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "allocator/core/Op.h"

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

// The anchor sequence of the PyTorch-side measurement (traces/pytorch-2.11-h100/README.md):
// up to 400 live tensors and 6 GiB; half the allocations log-uniform in [512 B, 1 MiB), 42%
// uniform in [1, 20) MiB, 8% uniform in [20, 256) MiB; an op allocates with probability 1/2
// while under both limits, otherwise frees a uniformly chosen live tensor. A fixed xorshift
// stream makes it identical in every process and on every machine.
class AnchorSequence {
public:
    alloc::Program make(std::size_t count) {
        alloc::Program program;
        program.ops.reserve(count);
        std::vector<std::uint64_t> liveIds;
        std::vector<std::uint64_t> liveSizes;
        std::uint64_t liveBytes = 0;
        std::uint64_t nextId = 1;
        constexpr std::uint64_t kMiB = 1ull << 20;
        for (std::size_t i = 0; i < count; ++i) {
            const bool room = liveIds.size() < 400 && liveBytes < (6ull << 30);
            if (liveIds.empty() || (room && uniform() < 0.5)) {
                const double pick = uniform();
                std::uint64_t size = 0;
                if (pick < 0.5) {
                    size = static_cast<std::uint64_t>(std::exp(std::log(512.0) + uniform() * (std::log(1048576.0) - std::log(512.0))));
                } else if (pick < 0.92) {
                    size = static_cast<std::uint64_t>(static_cast<double>(kMiB) + uniform() * 19.0 * static_cast<double>(kMiB));
                } else {
                    size = static_cast<std::uint64_t>(20.0 * static_cast<double>(kMiB) + uniform() * 236.0 * static_cast<double>(kMiB));
                }
                program.ops.push_back(alloc::Op::alloc(nextId, size));
                liveIds.push_back(nextId++);
                liveSizes.push_back(size);
                liveBytes += size;
            } else {
                const std::size_t victim = static_cast<std::size_t>(next() % liveIds.size());
                program.ops.push_back(alloc::Op::free(liveIds[victim]));
                liveBytes -= liveSizes[victim];
                liveIds[victim] = liveIds.back();
                liveSizes[victim] = liveSizes.back();
                liveIds.pop_back();
                liveSizes.pop_back();
            }
        }
        return program;
    }

private:
    std::uint64_t next() {
        state_ ^= state_ << 13;
        state_ ^= state_ >> 7;
        state_ ^= state_ << 17;
        return state_;
    }
    double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

    std::uint64_t state_ = 88172645463325252ull;
};

inline RaceOps makeRaceOps(std::size_t count) { return raceOpsFromProgram(AnchorSequence().make(count)); }

}  // namespace allocscope::gpu
