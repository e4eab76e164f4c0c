#include "allocator/device/cuda/CudaRawCalls.h"

#include <cuda_runtime_api.h>

#include "allocator/device/cuda/CudaRuntimeCheck.h"

namespace allocscope::alloc {

void CudaRawCalls::setDevice(int device) {
    throwIfFailed(cudaSetDevice(device), [&] { return "cudaSetDevice(" + std::to_string(device) + ")"; });
}

std::optional<std::uint64_t> CudaRawCalls::malloc(std::uint64_t size) {
    void* pointer = nullptr;
    const cudaError_t status = cudaMalloc(&pointer, size);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return std::nullopt;
    }
    throwIfFailed(status, [&] { return "cudaMalloc(" + bytesText(size) + ")"; });
    return reinterpret_cast<std::uint64_t>(pointer);
}

void CudaRawCalls::free(std::uint64_t pointer) {
    throwIfFailed(cudaFree(reinterpret_cast<void*>(pointer)), "cudaFree");
}

std::optional<std::uint64_t> CudaRawCalls::mallocAsync(std::uint64_t size) {
    void* pointer = nullptr;
    const cudaError_t status = cudaMallocAsync(&pointer, size, nullptr);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return std::nullopt;
    }
    throwIfFailed(status, [&] { return "cudaMallocAsync(" + bytesText(size) + ")"; });
    return reinterpret_cast<std::uint64_t>(pointer);
}

void CudaRawCalls::freeAsync(std::uint64_t pointer) {
    throwIfFailed(cudaFreeAsync(reinterpret_cast<void*>(pointer), nullptr), "cudaFreeAsync");
}

void CudaRawCalls::keepDefaultPoolMemory(int device) {
    cudaMemPool_t pool = nullptr;
    throwIfFailed(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    std::uint64_t threshold = UINT64_MAX;
    throwIfFailed(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                  "cudaMemPoolSetAttribute(ReleaseThreshold)");
}

void CudaRawCalls::memset(std::uint64_t pointer, std::uint64_t size) {
    throwIfFailed(cudaMemset(reinterpret_cast<void*>(pointer), 0, size), [&] { return "cudaMemset(" + bytesText(size) + ")"; });
}

void CudaRawCalls::synchronize() { throwIfFailed(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

std::string CudaRawCalls::deviceName(int device) {
    cudaDeviceProp prop{};
    throwIfFailed(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    return prop.name;
}

std::string CudaRawCalls::lastError() { return cudaGetErrorString(cudaGetLastError()); }

}  // namespace allocscope::alloc
