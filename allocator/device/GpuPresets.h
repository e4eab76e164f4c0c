#pragma once
// Simulated GPUs: the total memory a real card of that kind reports (cudaDeviceProp::
// totalGlobalMem) and what its CUDA context takes before the first allocation.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace allocscope::alloc {

struct GpuPreset {
    std::string name;                 // "h100-80gb"
    std::string description;          // "NVIDIA H100 80GB HBM3"
    std::uint64_t totalMemory = 0;    // bytes
    std::uint64_t contextMemory = 0;  // bytes the CUDA context holds ("non-PyTorch memory")
};

const std::vector<GpuPreset>& gpuPresets();
std::optional<GpuPreset> findGpuPreset(std::string_view name);
inline constexpr std::string_view kDefaultGpuPreset = "h100-80gb";

}  // namespace allocscope::alloc
