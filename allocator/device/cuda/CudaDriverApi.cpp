#include "allocator/device/cuda/CudaDriverApi.h"

#include <cuda_runtime_api.h>

#include "allocator/device/cuda/CudaError.h"

namespace allocscope::alloc {

namespace {

// The driver ABI we ask for. These entry points have kept their signatures since CUDA 10.2;
// asking for the 12.0 versions works with every driver that can run a CUDA 12/13 runtime.
constexpr unsigned int kDriverAbiVersion = 12000;

template <typename Fn>
void load(Fn& target, const char* symbol) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t status =
        cudaGetDriverEntryPointByVersion(symbol, &fn, kDriverAbiVersion, cudaEnableDefault, &found);
    if (status != cudaSuccess) {
        // Leave no sticky-looking error behind for the next runtime call to trip over.
        cudaGetLastError();
        throw CudaError(std::string("cudaGetDriverEntryPointByVersion(\"") + symbol + "\")",
                        static_cast<int>(status), cudaGetErrorName(status), cudaGetErrorString(status));
    }
    if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
        throw CudaError(std::string("the CUDA driver does not provide ") + symbol +
                        (found == cudaDriverEntryPointVersionNotSufficent ? " (driver too old)" : ""));
    }
    target = reinterpret_cast<Fn>(fn);
}

}  // namespace

const CudaDriverApi& CudaDriverApi::instance() {
    // A throwing initialiser leaves the static uninitialised, so a later call tries again.
    static const CudaDriverApi api;
    return api;
}

CudaDriverApi::CudaDriverApi() {
    load(getErrorName, "cuGetErrorName");
    load(getErrorString, "cuGetErrorString");
    load(deviceGet, "cuDeviceGet");
    load(deviceGetAttribute, "cuDeviceGetAttribute");
    load(memCreate, "cuMemCreate");
    load(memRelease, "cuMemRelease");
    load(memMap, "cuMemMap");
    load(memUnmap, "cuMemUnmap");
    load(memSetAccess, "cuMemSetAccess");
    load(memAddressReserve, "cuMemAddressReserve");
    load(memAddressFree, "cuMemAddressFree");
    load(memGetAllocationGranularity, "cuMemGetAllocationGranularity");
}

std::string CudaDriverApi::errorName(CUresult result) const {
    const char* name = nullptr;
    if (getErrorName == nullptr || getErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
        return "CUresult " + std::to_string(static_cast<int>(result));
    }
    return name;
}

std::string CudaDriverApi::errorText(CUresult result) const {
    const char* text = nullptr;
    if (getErrorString == nullptr || getErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) {
        return "unknown driver error";
    }
    return text;
}

void CudaDriverApi::check(CUresult result, const std::string& call) const {
    if (result == CUDA_SUCCESS) return;
    throw CudaError(call, static_cast<int>(result), errorName(result), errorText(result));
}

}  // namespace allocscope::alloc
