#include "allocator/workloads/MultiModelSharingWorkload.h"

#include <algorithm>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/workloads/ProgramBuilder.h"
#include "allocator/workloads/Rng.h"

namespace allocscope::alloc {

std::string MultiModelSharingWorkload::summary() const {
    return "two models taking turns under a memory fraction: where garbage_collection_threshold matters";
}

std::string MultiModelSharingWorkload::description() const {
    return "Two models share one GPU under set_per_process_memory_fraction (the `fraction` parameter; "
           "1 = no cap). Both keep their weights; they take turns running a batch whose activations "
           "(one tensor per block, sizes jittered by the seed) are freed at the end of the turn. Each "
           "model's cached activation blocks rarely fit the other's, so the cache keeps growing until "
           "it hits the cap: then every miss costs a release of all cached segments and a retry "
           "(num_alloc_retries). garbage_collection_threshold releases the oldest cached segments "
           "before that happens, once reserved memory passes threshold x cap, but only when a fraction "
           "is set: without a cap the threshold does nothing (PyTorch's rule, reference §4.1).";
}

std::vector<ParamSpec> MultiModelSharingWorkload::params() const {
    return {
        ParamSpec::real("fraction", 0.25, 0.01, 1.0, "set_per_process_memory_fraction at the start (1 = none)"),
        ParamSpec::integer("turns", 12, 1, 100000, "turns (alternating models)"),
        ParamSpec::integer("weights_a_mb", 3072, 1, 1 << 20, "model A's weights (MiB)"),
        ParamSpec::integer("weights_b_mb", 4096, 1, 1 << 20, "model B's weights (MiB)"),
        ParamSpec::integer("act_a_mb", 640, 11, 1 << 20, "model A's activation per block (MiB)"),
        ParamSpec::integer("act_b_mb", 720, 11, 1 << 20, "model B's activation per block (MiB)"),
        ParamSpec::integer("blocks", 10, 1, 10000, "activation tensors per turn"),
        ParamSpec::integer("jitter_pct", 10, 0, 90, "activation size jitter per turn (percent)"),
    };
}

GeneratedProgram MultiModelSharingWorkload::generate(const WorkloadParams& params, std::uint64_t seed) const {
    Rng rng(seed);
    ProgramBuilder b("two_models.py");
    const std::uint32_t sWa = b.stack("load", 10, "ModelA", 30);
    const std::uint32_t sWb = b.stack("load", 10, "ModelB", 31);
    const std::uint32_t sAa = b.stack("forward", 20, "ModelA", 40);
    const std::uint32_t sAb = b.stack("forward", 20, "ModelB", 41);
    const double fraction = params.getDouble("fraction");
    if (fraction < 1.0) b.setMemoryFraction(fraction);

    const std::uint64_t chunk = 256 * kMiB;  // weights come in 256 MiB tensors
    auto loadWeights = [&](std::uint64_t bytes, std::uint32_t stackId) {
        for (std::uint64_t done = 0; done < bytes; done += chunk) b.alloc(std::min(chunk, bytes - done), stackId);
    };
    b.begin("load model A");
    loadWeights(static_cast<std::uint64_t>(params.getInt("weights_a_mb")) * kMiB, sWa);
    b.end("load model A");
    b.begin("load model B");
    loadWeights(static_cast<std::uint64_t>(params.getInt("weights_b_mb")) * kMiB, sWb);
    b.end("load model B");

    const auto blocks = static_cast<std::uint64_t>(params.getInt("blocks"));
    const auto jitter = static_cast<std::uint64_t>(params.getInt("jitter_pct"));
    const auto turns = params.getInt("turns");
    for (std::int64_t t = 0; t < turns; ++t) {
        const bool a = t % 2 == 0;
        const std::uint64_t base = static_cast<std::uint64_t>(params.getInt(a ? "act_a_mb" : "act_b_mb")) * kMiB;
        // One batch size per turn: every block's activation scales with it.
        const std::uint64_t pct = 100 - jitter + rng.uniform(0, 2 * jitter);
        const std::uint64_t size = (base * pct / 100) / (2 * kMiB) * (2 * kMiB);
        b.begin(a ? "model A turn" : "model B turn");
        std::vector<std::uint64_t> acts;
        for (std::uint64_t i = 0; i < blocks; ++i) acts.push_back(b.alloc(size, a ? sAa : sAb));
        for (auto it = acts.rbegin(); it != acts.rend(); ++it) b.free(*it);
        b.end(a ? "model A turn" : "model B turn");
    }
    return b.take();
}

}  // namespace allocscope::alloc
