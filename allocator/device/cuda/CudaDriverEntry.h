#pragma once
// One CUDA driver entry point (ABI 12.0), fetched through the runtime, or null where the driver
// lacks it: for callers that fall back to something else (StreamFreeQueue's markings; the
// completion probe). libcuda is never linked: binaries must start where there is no driver.
// The runtime's handles are the driver's (cudaStream_t is CUstream, cudaEvent_t is CUevent).
//
// Private header of the CUDA backend (it includes the toolkit's headers); CudaDriverApi is the
// strict form, for entry points the backend cannot do without.
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace allocscope::alloc {

template <typename Fn>
Fn optionalDriverEntry(const char* symbol) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        cudaGetLastError();  // leave no error behind for the next runtime call
        return nullptr;
    }
    return reinterpret_cast<Fn>(fn);
}

}  // namespace allocscope::alloc
