#pragma once
// A CUDA driver entry point (ABI 12.0), fetched through the runtime, so that libcuda is never
// linked (binaries must start where there is no driver). Null where the driver lacks it. The
// runtime's handles are the driver's (cudaStream_t is CUstream, cudaEvent_t is CUevent). Needs the
// toolkit's headers: only the GPU race and its probe include it.
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace allocscope::gpu {

template <typename Fn>
Fn driverEntry(const char* symbol) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return reinterpret_cast<Fn>(fn);
}

}  // namespace allocscope::gpu
