#pragma once
// OOM recordings made without a GPU, for the limit inference and the `oom` verb (issue 35): a
// hand-made program runs on a SimulatedDevice under a known limit (a memory fraction, or a device
// whose other memory leaves a known room) until its first OOM, as an uncaught OutOfMemoryError
// stops a real program, and the allocator's events and final segments are written as a PyTorch
// snapshot pickle, the way torch.cuda.memory._dump_snapshot would after the error.
#include <cstdint>
#include <optional>
#include <string>

#include "allocator/core/Op.h"
#include "allocator/core/StackTable.h"

namespace oomtest {

struct Limit {
    std::uint64_t totalMemory = 85'017'493'504ull;
    std::uint64_t otherMemory = 552'402'944ull;
    std::optional<double> memoryFraction;
    std::uint64_t bytes() const;  // what PyTorch could reserve under it
};

// n steps of: a scratch buffer of 2*keep + hole MiB, freed, then keep / hole / keep carved from
// it; then every hole is freed and `request` MiB is asked for. Each segment keeps a hole between
// two live tensors: with n * hole >= request the OOM is fragmentation (expandable segments avoid
// it at any limit that reproduces it); with n * hole < request expandable segments avoid it only
// above 2 * keep * n + the request's pages.
struct Shape {
    int steps = 3;
    std::uint64_t keepMiB = 200;
    std::uint64_t holeMiB = 180;
    std::uint64_t requestMiB = 256;
};

struct Recording {
    allocscope::alloc::Program program;
    allocscope::alloc::StackTable stacks;
    std::optional<std::uint64_t> oomOp;  // the op that failed
    std::uint64_t peakReserved = 0;
};

allocscope::alloc::Program holesProgram(const Shape& shape, allocscope::alloc::StackTable& stacks);

// Runs `program` under `config` and `limit` until its first OOM and writes the snapshot to `path`.
Recording record(const Shape& shape, const std::string& config, const Limit& limit, const std::string& path);
// The same for any program.
Recording recordProgram(allocscope::alloc::Program program, allocscope::alloc::StackTable stacks, const std::string& config,
                        const Limit& limit, const std::string& path);

}  // namespace oomtest
