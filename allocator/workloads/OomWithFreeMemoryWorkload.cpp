#include "allocator/workloads/OomWithFreeMemoryWorkload.h"

#include "allocator/config/AllocatorConfig.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/ProgramBuilder.h"

namespace allocscope::alloc {

std::string OomWithFreeMemoryWorkload::summary() const {
    return "an OOM with gigabytes \"reserved by PyTorch but unallocated\" (24 GB card)";
}

std::string OomWithFreeMemoryWorkload::description() const {
    return "Each step allocates a 580 MiB scratch buffer and frees it, then carves three tensors out of "
           "the cached block: 200 MiB, a 180 MiB temporary, 200 MiB. Steps repeat until the card is "
           "nearly full (sized for the GPU named by the `gpu` parameter). Then every temporary is freed: "
           "each segment now has a 180 MiB hole between two live tensors. A 256 MiB request finds no "
           "free block that large, cudaMalloc fails, and the retry after empty-cache releases nothing "
           "because no segment is entirely free: PyTorch raises an OOM while about 7 GiB sit free in its "
           "own cache. With expandable_segments:True the holes are whole 20 MiB pages, the retry unmaps "
           "them and maps the request at the end of the range: no OOM. With max_split_size_mb:128 the "
           "scratch buffer is never split, every tensor gets its own segment, and the freed temporaries "
           "are whole segments the retry can release.";
}

std::vector<ParamSpec> OomWithFreeMemoryWorkload::params() const {
    std::vector<std::string> gpus;
    for (const GpuPreset& p : gpuPresets()) gpus.push_back(p.name);
    return {
        ParamSpec::choice("gpu", "24gb", gpus, "the card the fill is sized for (run it on the same --gpu)"),
        ParamSpec::integer("keep_mb", 200, 11, 65536, "size of each of the two tensors kept per segment (MiB)"),
        ParamSpec::integer("hole_mb", 180, 11, 65536, "size of the temporary freed between them (MiB)"),
        ParamSpec::integer("request_mb", 256, 1, 65536, "the request that fails (MiB)"),
        ParamSpec::integer("headroom_mb", 128, 0, 65536, "device memory left free at the end (MiB, < request_mb)"),
    };
}

GeneratedProgram OomWithFreeMemoryWorkload::generate(const WorkloadParams& params, std::uint64_t /*seed*/) const {
    const GpuPreset gpu = *findGpuPreset(params.getChoice("gpu"));
    const auto keep = static_cast<std::uint64_t>(params.getInt("keep_mb")) * kMiB;
    const auto hole = static_cast<std::uint64_t>(params.getInt("hole_mb")) * kMiB;
    const auto request = static_cast<std::uint64_t>(params.getInt("request_mb")) * kMiB;
    const auto headroom = static_cast<std::uint64_t>(params.getInt("headroom_mb")) * kMiB;
    if (headroom >= request) {
        throw WorkloadError("headroom_mb must be smaller than request_mb, or the request would fit",
                            "headroom_mb=" + std::to_string(params.getInt("headroom_mb")));
    }
    if (hole >= request) {
        throw WorkloadError("hole_mb must be smaller than request_mb, or a hole would serve the request",
                            "hole_mb=" + std::to_string(params.getInt("hole_mb")));
    }
    const std::uint64_t available = gpu.totalMemory - gpu.contextMemory;
    const std::uint64_t group = 2 * keep + hole;
    std::uint64_t groups = available / group;
    if (groups > 0 && available - groups * group < headroom) --groups;
    const std::uint64_t left = available - groups * group;
    // A filler tensor brings the device's free memory down to about `headroom`.
    std::uint64_t filler = left > headroom ? (left - headroom) / (2 * kMiB) * (2 * kMiB) : 0;
    if (filler < 10 * kMiB) filler = 0;  // below 10 MiB it would get a 20 MiB segment anyway

    ProgramBuilder b("oom_demo.py");
    const std::uint32_t sScratch = b.stack("scratch", 12, "step", 30);
    const std::uint32_t sKeep = b.stack("activation", 14, "step", 31);
    const std::uint32_t sTemp = b.stack("temporary", 16, "step", 32);
    const std::uint32_t sFill = b.stack("other_model", 40);
    const std::uint32_t sReq = b.stack("logits", 50);

    std::vector<std::uint64_t> temps;
    b.begin("fill the card");
    for (std::uint64_t g = 0; g < groups; ++g) {
        const std::uint64_t scratch = b.alloc(group, sScratch);
        b.free(scratch);
        b.alloc(keep, sKeep);
        temps.push_back(b.alloc(hole, sTemp));
        b.alloc(keep, sKeep);
    }
    if (filler > 0) b.alloc(filler, sFill);
    b.end("fill the card");

    b.begin("free the temporaries");
    for (std::uint64_t id : temps) b.free(id);
    b.end("free the temporaries");

    b.begin("request");
    b.alloc(request, sReq);
    b.end("request");
    return b.take();
}

}  // namespace allocscope::alloc
