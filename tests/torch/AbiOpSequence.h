#pragma once
// One deterministic stream of what a PyTorch process asks of its allocator (mallocs of mixed
// sizes on two streams, frees, record_stream, empty_cache, synchronize, memory fraction, stats
// resets), played against any target: the C ABI of liballocscope_torch.so or a CachingAllocator
// driven directly, whose results must then be the same.
//
// A target has: std::uint64_t alloc(size, stream) (0 = OOM), free(address), record(address,
// stream), emptyCache(), synchronize(), fraction(f), resetPeak(), resetAccumulated().
#include <cstddef>
#include <cstdint>
#include <vector>

namespace allocscope::testing {

inline constexpr std::uint64_t kSideStream = 0x5eed00;  // a cudaStream_t value beside the default 0

template <class Target>
void playAbiOps(Target& target, std::size_t ops, std::uint64_t seed = 38) {
    std::uint64_t state = seed;
    auto next = [&state] {  // splitmix64
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    struct Live {
        std::uint64_t address;
        std::uint64_t stream;
    };
    std::vector<Live> live;
    bool halved = false;
    for (std::size_t i = 0; i < ops; ++i) {
        const std::uint64_t r = next() % 1000;
        if (r < 520 || live.empty()) {
            if (live.size() >= 240) continue;
            const std::uint64_t kind = next() % 100;
            std::uint64_t size = 0;
            if (kind < 60) size = 1 + next() % (1u << 20);                      // small pool
            else if (kind < 97) size = (1u << 20) + next() % (19u << 20);       // large, split
            else size = (20u << 20) + next() % (80u << 20);                     // oversize-ish
            const std::uint64_t stream = next() % 2 ? 0 : kSideStream;
            if (const std::uint64_t address = target.alloc(size, stream)) live.push_back({address, stream});
        } else if (r < 950) {
            const std::size_t k = next() % live.size();
            target.free(live[k].address);
            live[k] = live.back();
            live.pop_back();
        } else if (r < 980) {
            const Live& block = live[next() % live.size()];
            target.record(block.address, block.stream == 0 ? kSideStream : 0);
        } else if (r < 984) {
            target.emptyCache();
        } else if (r < 989) {
            target.synchronize();
        } else if (r < 993) {
            halved = !halved;
            target.fraction(halved ? 0.5 : 1.0);
        } else if (r < 997) {
            target.resetPeak();
        } else {
            target.resetAccumulated();
        }
    }
}

}  // namespace allocscope::testing
