#pragma once
// The bare CUDA runtime calls the GPU benchmarks time as baselines (cudaMalloc / cudaFree,
// cudaMallocAsync / cudaFreeAsync on the default stream), plus the few helpers they need, behind
// a CUDA-free header so benchmark sources build without the toolkit's include paths.
// Checked like everything in the backend: unexpected errors throw CudaError.
#include <cstdint>
#include <optional>
#include <string>

namespace allocscope::alloc {

class CudaRawCalls {
public:
    static void setDevice(int device);
    // cudaMalloc; nullopt = cudaErrorMemoryAllocation.
    static std::optional<std::uint64_t> malloc(std::uint64_t size);
    static void free(std::uint64_t pointer);
    // cudaMallocAsync / cudaFreeAsync on the legacy default stream (stream-ordered, default pool).
    static std::optional<std::uint64_t> mallocAsync(std::uint64_t size);
    static void freeAsync(std::uint64_t pointer);
    // The default memory pool keeps what it holds (release threshold UINT64_MAX), as PyTorch's
    // cudaMallocAsync backend configures it.
    static void keepDefaultPoolMemory(int device);
    // cudaMemset(pointer, 0, size): makes memory real outside timed loops.
    static void memset(std::uint64_t pointer, std::uint64_t size);
    static void synchronize();  // cudaDeviceSynchronize
    static std::string deviceName(int device);
    // cudaGetLastError's text ("no error" when none): what a run left behind.
    static std::string lastError();
};

}  // namespace allocscope::alloc
