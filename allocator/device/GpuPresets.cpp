#include "allocator/device/GpuPresets.h"

namespace allocscope::alloc {

const std::vector<GpuPreset>& gpuPresets() {
    // h100-80gb is measured (traces/pytorch-2.11-h100: total 85,017,493,504 B, 84,465,090,560 B
    // free after CUDA init). The others use their cards' reported totals and the same context.
    static const std::vector<GpuPreset> presets = {
        {"24gb", "24 GB card (RTX 4090 class)", 25'393'692'672ull, 552'402'944ull},
        {"40gb", "40 GB card (A100 40GB class)", 42'298'834'944ull, 552'402'944ull},
        {"h100-80gb", "NVIDIA H100 80GB HBM3", 85'017'493'504ull, 552'402'944ull},
        {"h200-141gb", "NVIDIA H200 141GB HBM3e", 150'754'820'096ull, 552'402'944ull},
    };
    return presets;
}

std::optional<GpuPreset> findGpuPreset(std::string_view name) {
    for (const GpuPreset& preset : gpuPresets()) {
        if (preset.name == name) return preset;
    }
    return std::nullopt;
}

}  // namespace allocscope::alloc
