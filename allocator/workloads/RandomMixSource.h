#pragma once
// The streaming generator behind random-mix (RandomMixWorkload.h).
//
// Each step either allocates (probability 0.55 while the live set is under its caps) or frees a
// uniformly chosen live tensor (so lifetimes are geometric: most tensors die young, a few live
// long). Sizes: with probability `small_fraction` a small-pool size (512 B..1 MiB, log-uniform),
// otherwise 1 MiB..`max_mb` log-uniform. Streams: 0, kCopyStream, kSideStream at 60/25/15 %. With
// probability `cross_stream` a new tensor is record_stream()'d on another stream and its free
// completes after 1..8 allocations there (Workload.h). Rarely (1 in 20,000 ops) a synchronize.
// `events` counts the ops of the main loop; the final cleanup then frees what is still alive.
#include <cstdint>
#include <vector>

#include "allocator/workloads/ProgramBuilder.h"
#include "allocator/workloads/Rng.h"

namespace allocscope::alloc {

struct RandomMixSettings {
    std::uint64_t events = 100000;
    std::uint64_t maxLiveBytes = 16ull << 30;
    std::uint64_t maxLiveTensors = 4096;
    std::uint64_t maxBytes = 256ull << 20;
    double smallFraction = 0.6;
    double crossStream = 0.05;
};

class RandomMixSource final : public ProgramSource {
public:
    RandomMixSource(const RandomMixSettings& settings, std::uint64_t seed);
    const std::vector<std::string>& labels() const override { return builder_.labels(); }
    const StackTable& stacks() const override { return builder_.stacks(); }
    bool nextChunk(std::vector<Op>& out) override;

private:
    struct Live {
        std::uint64_t id;
        std::uint64_t size;
        StreamId use;  // the other stream it was recorded on, or the allocation stream
        StreamId stream;
    };
    void step();
    void freeAt(std::size_t index);
    void cleanup();

    RandomMixSettings s_;
    Rng rng_;
    ProgramBuilder builder_;
    std::vector<Live> live_;
    std::uint64_t liveBytes_ = 0;
    std::uint64_t emitted_ = 0;  // ops handed out so far
    bool done_ = false;
    std::uint32_t stacks_[3] = {0, 0, 0};
};

}  // namespace allocscope::alloc
