#pragma once
// Private helper of the CUDA backend (includes the runtime header): turns a failed runtime call
// into a CudaError. Only allocator/device/cuda/*.cpp include it.
#include <cuda_runtime_api.h>

#include <string>
#include <type_traits>
#include <utility>

#include "allocator/device/cuda/CudaError.h"

namespace allocscope::alloc {

// Throws CudaError for anything but cudaSuccess. The error is also cleared from the runtime's
// "last error" slot so a later, unrelated check does not report it a second time.
// `call` names what was attempted: a C string, or a callable returning the text, so hot paths
// (cudaMallocAsync in a timed loop) build no string unless the call failed.
template <typename Call>
inline void throwIfFailed(cudaError_t status, Call&& call) {
    if (status == cudaSuccess) [[likely]] return;
    cudaGetLastError();
    std::string text;
    if constexpr (std::is_invocable_v<Call>) {
        text = std::forward<Call>(call)();
    } else {
        text = call;
    }
    throw CudaError(std::move(text), static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status));
}

inline std::string bytesText(unsigned long long bytes) { return std::to_string(bytes) + " bytes"; }

}  // namespace allocscope::alloc
