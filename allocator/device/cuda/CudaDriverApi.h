#pragma once
// The CUDA driver entry points of the virtual-memory API, fetched at run time through the
// runtime (cudaGetDriverEntryPointByVersion). libcuda is never linked: binaries must start on
// machines without a driver (CI, laptops), where loading simply fails and we report "no GPU".
//
// Private header of the CUDA backend: it includes <cuda.h>, so only allocator/device/cuda/*.cpp
// include it (they are compiled only when ALLOCSCOPE_WITH_CUDA is on).
#include <cuda.h>

#include <string>

namespace allocscope::alloc {

class CudaDriverApi {
public:
    // Loads every entry point once; throws CudaError naming the first one that is missing.
    static const CudaDriverApi& instance();

    // Throws CudaError("<call>: CUDA_ERROR_...") unless `result` is CUDA_SUCCESS.
    void check(CUresult result, const std::string& call) const;
    std::string errorName(CUresult result) const;
    std::string errorText(CUresult result) const;

    decltype(&::cuMemCreate) memCreate = nullptr;
    decltype(&::cuMemRelease) memRelease = nullptr;
    decltype(&::cuMemMap) memMap = nullptr;
    decltype(&::cuMemUnmap) memUnmap = nullptr;
    decltype(&::cuMemSetAccess) memSetAccess = nullptr;
    decltype(&::cuMemAddressReserve) memAddressReserve = nullptr;
    decltype(&::cuMemAddressFree) memAddressFree = nullptr;
    decltype(&::cuMemGetAllocationGranularity) memGetAllocationGranularity = nullptr;
    decltype(&::cuDeviceGet) deviceGet = nullptr;
    decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
    decltype(&::cuGetErrorName) getErrorName = nullptr;
    decltype(&::cuGetErrorString) getErrorString = nullptr;

private:
    CudaDriverApi();
};

}  // namespace allocscope::alloc
