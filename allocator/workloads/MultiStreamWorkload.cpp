#include "allocator/workloads/MultiStreamWorkload.h"

#include "allocator/config/AllocatorConfig.h"
#include "allocator/workloads/ProgramBuilder.h"
#include "allocator/workloads/Rng.h"

namespace allocscope::alloc {

std::string MultiStreamWorkload::summary() const {
    return "a compute and a copy stream: record_stream, pending frees, no cross-stream reuse";
}

std::string MultiStreamWorkload::description() const {
    return "A data loader copies each batch to the GPU on a copy stream; the model consumes it on the "
           "compute stream (record_stream(compute)), and results are copied back on the copy stream "
           "(record_stream(copy)). When Python drops such a tensor its block cannot be reused yet: it "
           "stays active_pending_free until the other stream's work has passed the recorded event "
           "(modelled as the next `lag` allocations on that stream, see Workload.h). Blocks are cached "
           "per stream, so memory freed by one stream is never reused by the other: each stream "
           "grows its own segments. The seed jitters batch sizes.";
}

std::vector<ParamSpec> MultiStreamWorkload::params() const {
    return {
        ParamSpec::integer("iterations", 200, 1, 1'000'000, "batches"),
        ParamSpec::integer("batch_mb", 48, 1, 1 << 20, "input batch copied in per iteration (MiB)"),
        ParamSpec::integer("activations", 6, 0, 10000, "activation tensors per iteration on the compute stream"),
        ParamSpec::integer("act_mb", 24, 1, 1 << 20, "size of each activation (MiB)"),
        ParamSpec::integer("output_mb", 8, 1, 1 << 20, "result copied out per iteration (MiB)"),
        ParamSpec::integer("lag", 3, 1, 1000, "allocations on the using stream before a pending free completes"),
        ParamSpec::integer("jitter_pct", 25, 0, 90, "batch size jitter (percent)"),
    };
}

GeneratedProgram MultiStreamWorkload::generate(const WorkloadParams& params, std::uint64_t seed) const {
    Rng rng(seed);
    ProgramBuilder b("two_streams.py");
    const std::uint32_t sIn = b.stack("to", 30, "prefetch", 44);
    const std::uint32_t sAct = b.stack("forward", 60, "train_step", 80);
    const std::uint32_t sOut = b.stack("forward", 70, "train_step", 81);
    const std::uint32_t sHost = b.stack("to_host", 90, "train_step", 82);
    const auto jitter = static_cast<std::uint64_t>(params.getInt("jitter_pct"));
    const auto lag = static_cast<std::uint32_t>(params.getInt("lag"));
    const auto jittered = [&](std::uint64_t bytes) {
        const std::uint64_t pct = 100 - jitter + rng.uniform(0, 2 * jitter);
        const std::uint64_t v = bytes * pct / 100;
        return v == 0 ? 512 : v;
    };
    const std::uint64_t batch = static_cast<std::uint64_t>(params.getInt("batch_mb")) * kMiB;
    const std::uint64_t act = static_cast<std::uint64_t>(params.getInt("act_mb")) * kMiB;
    const std::uint64_t out = static_cast<std::uint64_t>(params.getInt("output_mb")) * kMiB;
    const auto iterations = params.getInt("iterations");
    const auto activations = params.getInt("activations");

    // The next batch is prefetched on the copy stream while the current one is consumed.
    std::uint64_t next = b.alloc(jittered(batch), sIn, kCopyStream);
    for (std::int64_t it = 0; it < iterations; ++it) {
        b.begin("iteration");
        const std::uint64_t input = next;
        b.recordStream(input, kComputeStream);
        if (it + 1 < iterations) next = b.alloc(jittered(batch), sIn, kCopyStream);
        std::vector<std::uint64_t> acts;
        for (std::int64_t a = 0; a < activations; ++a) acts.push_back(b.alloc(jittered(act), sAct, kComputeStream));
        const std::uint64_t result = b.alloc(out, sOut, kComputeStream);
        for (auto a = acts.rbegin(); a != acts.rend(); ++a) b.free(*a);
        b.freeWithUses(input, {kComputeStream}, lag);
        // Copy the result out on the copy stream: a small pinned staging tensor there, then drop.
        b.recordStream(result, kCopyStream);
        const std::uint64_t staging = b.alloc(4096, sHost, kCopyStream);
        b.free(staging);
        b.freeWithUses(result, {kCopyStream}, lag);
        b.end("iteration");
    }
    b.synchronize();
    return b.take();
}

}  // namespace allocscope::alloc
