#pragma once
// Private helper of the CUDA backend (includes the runtime header): turns a failed runtime call
// into a CudaError. Only allocator/device/cuda/*.cpp include it.
#include <cuda_runtime_api.h>

#include <string>

#include "allocator/device/cuda/CudaError.h"

namespace allocscope::alloc {

// Throws CudaError for anything but cudaSuccess. The error is also cleared from the runtime's
// "last error" slot so a later, unrelated check does not report it a second time.
inline void throwIfFailed(cudaError_t status, const std::string& call) {
    if (status == cudaSuccess) return;
    cudaGetLastError();
    throw CudaError(call, static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status));
}

inline std::string bytesText(unsigned long long bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace allocscope::alloc
