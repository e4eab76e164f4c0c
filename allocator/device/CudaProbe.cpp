#include "allocator/device/CudaProbe.h"

#ifdef ALLOCSCOPE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace allocscope::alloc {

bool cudaSupportCompiledIn() {
#ifdef ALLOCSCOPE_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

CudaProbeResult probeCudaDevices() {
    CudaProbeResult result;
#ifdef ALLOCSCOPE_HAVE_CUDA
    // The static runtime loads the driver here; without one this returns an error code, which
    // we report as "no GPU" rather than failing.
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        result.reason = std::string("CUDA unavailable: ") + cudaGetErrorString(status);
        return result;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        result.devices.push_back({i, prop.name, static_cast<std::uint64_t>(prop.totalGlobalMem)});
    }
    if (result.devices.empty()) result.reason = "no CUDA device found";
#else
    result.reason = "built without CUDA support";
#endif
    return result;
}

}  // namespace allocscope::alloc
