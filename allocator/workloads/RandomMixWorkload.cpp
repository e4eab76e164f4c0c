#include "allocator/workloads/RandomMixWorkload.h"

#include "allocator/workloads/RandomMixSource.h"

namespace allocscope::alloc {

std::string RandomMixWorkload::summary() const {
    return "stress mix: random sizes, lifetimes and three streams; `events` ops, streamed";
}

std::string RandomMixWorkload::description() const {
    return "Not a real program: a stress test. Allocations of random sizes (mostly small-pool sizes, "
           "the rest log-uniform up to max_mb) on three streams, freed in random order so most die "
           "young and a few live long; a few are used on a second stream (record_stream) and their "
           "frees stay pending for a while. The live set is capped (max_live_mb, 4096 tensors). "
           "`events` is the number of program ops (the allocator emits about 1.5 events per op); "
           "generation streams with constant memory, for benchmarks of 10,000,000 ops.";
}

std::vector<ParamSpec> RandomMixWorkload::params() const {
    return {
        ParamSpec::integer("events", 100000, 1, 1'000'000'000, "program ops in the main loop"),
        ParamSpec::integer("max_live_mb", 16384, 1, 1 << 24, "cap on live bytes (MiB)"),
        ParamSpec::integer("max_mb", 256, 2, 1 << 20, "largest request (MiB)"),
        ParamSpec::real("small_fraction", 0.6, 0.0, 1.0, "share of small-pool (<= 1 MiB) requests"),
        ParamSpec::real("cross_stream", 0.05, 0.0, 1.0, "share of tensors used on a second stream"),
    };
}

namespace {
RandomMixSettings settingsOf(const WorkloadParams& params) {
    RandomMixSettings s;
    s.events = static_cast<std::uint64_t>(params.getInt("events"));
    s.maxLiveBytes = static_cast<std::uint64_t>(params.getInt("max_live_mb")) << 20;
    s.maxBytes = static_cast<std::uint64_t>(params.getInt("max_mb")) << 20;
    s.smallFraction = params.getDouble("small_fraction");
    s.crossStream = params.getDouble("cross_stream");
    return s;
}
}  // namespace

std::unique_ptr<ProgramSource> RandomMixWorkload::open(const WorkloadParams& params, std::uint64_t seed) const {
    return std::make_unique<RandomMixSource>(settingsOf(params), seed);
}

GeneratedProgram RandomMixWorkload::generate(const WorkloadParams& params, std::uint64_t seed) const {
    RandomMixSource source(settingsOf(params), seed);
    GeneratedProgram out;
    std::vector<Op> chunk;
    while (source.nextChunk(chunk)) out.program.ops.append(chunk.begin(), chunk.end());
    out.program.labels = source.labels();
    out.stacks = source.stacks();
    return out;
}

}  // namespace allocscope::alloc
