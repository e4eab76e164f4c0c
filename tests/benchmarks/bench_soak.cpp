// Soak run of the allocator: for every option family of the property tests, a long random
// operation stream (RandomOpDriver: several streams, record_stream, pending frees, empty_cache,
// fraction changes, resets) with the InvariantChecker after every operation. Meant for a release
// build with assertions (scripts/soak). Exit status 1 on the first violation, with the seed.
//
//   bench_soak [--ops N] [--seed S] [--family NAME] [--smoke]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tests/allocator/RandomOpDriver.h"

using namespace allocscope::alloc;
using namespace allocscope::alloc::testing;

int main(int argc, char** argv) {
    std::uint64_t ops = 10'000'000;
    std::uint64_t seed = 20261122;
    std::string only;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--smoke") {
            ops = 2000;
        } else if (arg == "--ops" && i + 1 < argc) {
            ops = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--seed" && i + 1 < argc) {
            seed = std::strtoull(argv[++i], nullptr, 10);
        } else if (arg == "--family" && i + 1 < argc) {
            only = argv[++i];
        } else {
            std::fprintf(stderr, "usage: bench_soak [--ops N] [--seed S] [--family NAME] [--smoke]\n");
            return 2;
        }
    }
    std::printf("soak: %llu ops per family, seed %llu\n", static_cast<unsigned long long>(ops),
                static_cast<unsigned long long>(seed));
    int failures = 0;
    std::uint64_t familyIndex = 0;
    for (const PropertyFamily& family : propertyFamilies()) {
        ++familyIndex;
        if (!only.empty() && family.name != only) continue;
        RandomOpDriver driver(family, seed + familyIndex);
        const auto start = std::chrono::steady_clock::now();
        // In chunks, so a long run shows progress.
        constexpr std::uint64_t kChunk = 1'000'000;
        std::string failure;
        for (std::uint64_t done = 0; done < ops && failure.empty(); done += kChunk) {
            failure = driver.run(std::min(kChunk, ops - done));
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const CountingSink& counts = driver.eventCounts();
        if (!failure.empty()) {
            ++failures;
            std::printf("FAIL %s (seed %llu): %s\n", family.name.c_str(),
                        static_cast<unsigned long long>(seed + familyIndex), failure.c_str());
        } else {
            std::printf("ok   %-40s %llu ops, %.1f s, %llu events, %llu OOMs, %llu segment allocs/maps, %llu "
                        "frees/unmaps\n",
                        family.name.c_str(), static_cast<unsigned long long>(ops), seconds,
                        static_cast<unsigned long long>(counts.total()),
                        static_cast<unsigned long long>(driver.ooms()),
                        static_cast<unsigned long long>(counts.count(EventAction::SegmentAlloc) +
                                                        counts.count(EventAction::SegmentMap)),
                        static_cast<unsigned long long>(counts.count(EventAction::SegmentFree) +
                                                        counts.count(EventAction::SegmentUnmap)));
        }
        std::fflush(stdout);
    }
    return failures == 0 ? 0 : 1;
}
