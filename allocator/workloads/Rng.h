#pragma once
// The generators' random numbers: SplitMix64, fully specified, so a seed means the same program
// on every platform (std::uniform_int_distribution and friends are implementation-defined).
#include <cstdint>

namespace allocscope::alloc {

class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed ^ 0x5DEECE66Dull) {}
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [lo, hi] (inclusive). The modulo bias is irrelevant at these ranges.
    std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }
    double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
    bool chance(double p) { return unit() < p; }
    // Log-uniform in [lo, hi] (lo >= 1): an octave uniformly, then a value uniformly inside it,
    // integers only so no libm rounding can change a program.
    std::uint64_t logUniform(std::uint64_t lo, std::uint64_t hi) {
        const int a = 63 - __builtin_clzll(lo);
        const int b = 63 - __builtin_clzll(hi);
        const int octave = static_cast<int>(uniform(static_cast<std::uint64_t>(a), static_cast<std::uint64_t>(b)));
        const std::uint64_t base = 1ull << octave;
        const std::uint64_t v = uniform(base, octave >= 63 ? ~0ull : (base << 1) - 1);
        return v < lo ? lo : (v > hi ? hi : v);
    }

private:
    std::uint64_t state_;
};

}  // namespace allocscope::alloc
