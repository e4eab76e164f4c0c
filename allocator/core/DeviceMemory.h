#pragma once
// The driver below the caching allocator: what cudaMalloc/cudaFree and the CUDA virtual-memory
// API do. SimulatedDevice implements it in memory; CudaDevice on a real GPU. The allocator makes
// every decision itself and only asks the device for memory, so both backends see the same
// decisions as long as they hand out the same addresses.
#include <cstdint>
#include <optional>
#include <string>

#include "allocator/core/Event.h"

namespace allocscope::alloc {

class DeviceMemory {
public:
    virtual ~DeviceMemory() = default;

    virtual std::string name() const = 0;
    // cudaDeviceProp::totalGlobalMem: the base of memory fractions.
    virtual std::uint64_t totalMemory() const = 0;
    // cudaMemGetInfo's free bytes (quoted by the OOM message).
    virtual std::uint64_t freeMemory() const = 0;

    // cudaMalloc of one segment. nullopt = cudaErrorMemoryAllocation (out of memory).
    virtual std::optional<std::uint64_t> allocateSegment(std::uint64_t size, StreamId stream) = 0;
    virtual void freeSegment(std::uint64_t address, std::uint64_t size) = 0;

    // Expandable segments: a virtual-address reservation (cuMemAddressReserve) whose pages are
    // mapped (cuMemCreate + cuMemMap + cuMemSetAccess) and unmapped on demand.
    virtual std::optional<std::uint64_t> reserveAddressRange(std::uint64_t size,
                                                             std::uint64_t pageSize,
                                                             StreamId stream) = 0;
    virtual void releaseAddressRange(std::uint64_t base, std::uint64_t size) = 0;
    // Maps whole pages; false = CUDA_ERROR_OUT_OF_MEMORY (nothing stays mapped).
    virtual bool mapPages(std::uint64_t address, std::uint64_t size) = 0;
    virtual void unmapPages(std::uint64_t address, std::uint64_t size) = 0;
};

}  // namespace allocscope::alloc
