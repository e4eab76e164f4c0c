#pragma once
// The driver-placement corpus (tests/data/driver-placement): call sequences run on a real GPU by
// bench_gpu_driver_placement and the addresses the driver returned, and a PlacementModel scored
// against them. Test support, standard library only.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "allocator/replay/PlacementModel.h"

namespace replaytest {

struct DriverCall {
    char op = 0;  // m f r p u x (see bench_gpu_driver_placement.cpp)
    std::string id;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
};

struct DriverSequence {
    std::string name;
    bool heldOut = false;
    std::string gpu;           // "NVIDIA H200"
    std::string nvidiaSmi;     // "NVIDIA H200, 580.159.04, 143771 MiB"
    int runs = 0;
    int distinctRelative = 0;  // distinct address lists over the runs, relative to each run's first
    std::uint64_t totalMemory = 0;
    std::vector<DriverCall> calls;
    std::map<std::string, std::uint64_t> measured;  // id -> address (run 1)
    std::map<std::string, std::uint64_t> sizes;     // id -> bytes asked for (reservations: their size)
};

struct PlacementScore {
    int placements = 0;     // cudaMalloc and cuMemAddressReserve calls
    int exact = 0;          // after the first: the model's address relative to its first equals the driver's
    int orderDecisions = 0; // new segments placed while others of the same size were live
    int orderRight = 0;     // ... whose rank among those the model got right
};

class DriverCorpus {
public:
    // The sequence NAME of the corpus in `dir` (tests/data/driver-placement); throws
    // std::runtime_error naming the file and line on anything malformed.
    static DriverSequence load(const std::string& dir, const std::string& name);
    // Every sequence listed in dir/SEQUENCES.tsv, in its order.
    static std::vector<std::string> names(const std::string& dir);
    // Runs the sequence's calls through `model` (each call is its own step) and compares.
    static PlacementScore score(const DriverSequence& sequence, allocscope::alloc::PlacementModel& model);
};

}  // namespace replaytest
