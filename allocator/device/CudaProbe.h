#pragma once
// Which real CUDA devices this process can use. Never fails: a build without CUDA, a machine
// without a driver or without a GPU all answer "no devices" with the reason.
#include <cstdint>
#include <string>
#include <vector>

namespace allocscope::alloc {

struct CudaDeviceDesc {
    int index = 0;
    std::string name;
    std::uint64_t totalMemory = 0;
};

struct CudaProbeResult {
    std::vector<CudaDeviceDesc> devices;
    std::string reason;  // why `devices` is empty
};

CudaProbeResult probeCudaDevices();
bool cudaSupportCompiledIn();

}  // namespace allocscope::alloc
