#include "allocator/device/cuda/CudaAsyncBackend.h"

#include <cuda_runtime_api.h>

#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaRuntimeCheck.h"

namespace allocscope::alloc {

namespace {

cudaMemPool_t asPool(void* pool) { return static_cast<cudaMemPool_t>(pool); }

std::uint64_t poolAttribute(void* pool, cudaMemPoolAttr attribute, const char* name) {
    std::uint64_t value = 0;
    throwIfFailed(cudaMemPoolGetAttribute(asPool(pool), attribute, &value), [&] { return std::string("cudaMemPoolGetAttribute(") + name + ")"; });
    return value;
}

void resetHigh(void* pool, cudaMemPoolAttr attribute, const char* name) {
    std::uint64_t zero = 0;  // writing 0 resets a high-water mark to the current value
    throwIfFailed(cudaMemPoolSetAttribute(asPool(pool), attribute, &zero), [&] { return std::string("cudaMemPoolSetAttribute(") + name + ")"; });
}

}  // namespace

CudaAsyncBackend::CudaAsyncBackend(int device) : device_(device) {
    if (auto reason = CudaDevice::unavailableReason(device)) throw CudaError(*reason);
    throwIfFailed(cudaSetDevice(device), [&] { return "cudaSetDevice(" + std::to_string(device) + ")"; });
    cudaMemPool_t pool = nullptr;
    throwIfFailed(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
    pool_ = pool;
    std::uint64_t threshold = UINT64_MAX;
    throwIfFailed(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                  "cudaMemPoolSetAttribute(ReleaseThreshold)");
    size_t freeBytes = 0;
    size_t totalBytes = 0;
    throwIfFailed(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
    total_ = totalBytes;
    emptyCache();
    resetPeakStats();
}

CudaAsyncBackend::~CudaAsyncBackend() {
    cudaSetDevice(device_);
    for (const auto& [pointer, size] : live_) cudaFreeAsync(reinterpret_cast<void*>(pointer), nullptr);
    cudaDeviceSynchronize();
    cudaGetLastError();
}

std::optional<std::uint64_t> CudaAsyncBackend::malloc(std::uint64_t size) {
    if (size > limit_ || usedBytes_ + size > limit_) return std::nullopt;
    void* pointer = nullptr;
    const cudaError_t status = cudaMallocAsync(&pointer, size, nullptr);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return std::nullopt;
    }
    throwIfFailed(status, [&] { return "cudaMallocAsync(" + bytesText(size) + ")"; });
    const auto address = reinterpret_cast<std::uint64_t>(pointer);
    live_.emplace(address, size);
    usedBytes_ += size;
    return address;
}

bool CudaAsyncBackend::free(std::uint64_t pointer) {
    auto it = live_.find(pointer);
    if (it == live_.end()) return false;
    usedBytes_ -= it->second;
    live_.erase(it);
    throwIfFailed(cudaFreeAsync(reinterpret_cast<void*>(pointer), nullptr), "cudaFreeAsync");
    return true;
}

void CudaAsyncBackend::synchronize() { throwIfFailed(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

void CudaAsyncBackend::emptyCache() {
    synchronize();
    throwIfFailed(cudaMemPoolTrimTo(asPool(pool_), 0), "cudaMemPoolTrimTo(0)");
}

void CudaAsyncBackend::setMemoryFraction(double fraction) {
    limit_ = static_cast<std::uint64_t>(fraction * static_cast<double>(total_));
}

void CudaAsyncBackend::resetPeakStats() {
    resetHigh(pool_, cudaMemPoolAttrUsedMemHigh, "UsedMemHigh");
    resetHigh(pool_, cudaMemPoolAttrReservedMemHigh, "ReservedMemHigh");
}

DeviceStats CudaAsyncBackend::stats() {
    synchronize();
    DeviceStats stats;
    const auto used = static_cast<std::int64_t>(poolAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, "UsedMemCurrent"));
    const auto usedHigh = static_cast<std::int64_t>(poolAttribute(pool_, cudaMemPoolAttrUsedMemHigh, "UsedMemHigh"));
    const auto reserved = static_cast<std::int64_t>(poolAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, "ReservedMemCurrent"));
    const auto reservedHigh = static_cast<std::int64_t>(poolAttribute(pool_, cudaMemPoolAttrReservedMemHigh, "ReservedMemHigh"));
    stats.allocated_bytes[kAggregate].current = used;
    stats.allocated_bytes[kAggregate].peak = usedHigh;
    stats.active_bytes[kAggregate].current = used;
    stats.active_bytes[kAggregate].peak = usedHigh;
    stats.reserved_bytes[kAggregate].current = reserved;
    stats.reserved_bytes[kAggregate].peak = reservedHigh;
    stats.max_split_size = 0;
    return stats;
}

CudaAsyncRunResult CudaAsyncBackend::run(const Program& program, bool touch) {
    throwIfFailed(cudaSetDevice(device_), [&] { return "cudaSetDevice(" + std::to_string(device_) + ")"; });
    CudaAsyncRunResult result;
    std::unordered_map<std::uint64_t, std::uint64_t> byId;  // tensor id -> pointer
    std::uint64_t peakReserved = 0;
    for (const Op& op : program.ops) {
        ++result.ops;
        switch (op.kind) {
        case OpKind::Alloc: {
            if (op.size == 0) break;  // never reaches PyTorch's allocator
            const auto pointer = malloc(op.size);
            if (!pointer) {
                ++result.ooms;
                result.oomOps.push_back(result.ops - 1);
                break;
            }
            ++result.allocs;
            byId[op.id] = *pointer;
            // The pool grows inside cudaMallocAsync (host side), so its reserved size is exact here.
            const std::uint64_t reserved = poolAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, "ReservedMemCurrent");
            if (reserved > peakReserved) {
                peakReserved = reserved;
                result.peakReservedOp = result.ops - 1;
            }
            if (touch) throwIfFailed(cudaMemset(reinterpret_cast<void*>(*pointer), 0, op.size), [&] { return "cudaMemset(" + bytesText(op.size) + ")"; });
            break;
        }
        case OpKind::Free: {
            auto it = byId.find(op.id);
            if (it == byId.end() || !free(it->second)) {
                ++result.unknownFrees;
                break;
            }
            byId.erase(it);
            ++result.frees;
            break;
        }
        case OpKind::Synchronize:
            synchronize();
            break;
        case OpKind::EmptyCache:
            emptyCache();
            break;
        case OpKind::SetMemoryFraction:
            setMemoryFraction(op.fraction);
            break;
        case OpKind::ResetPeakStats:
            synchronize();
            resetPeakStats();
            break;
        case OpKind::RecordStream:           // one real stream: already ordered
        case OpKind::CompletePending:        // frees are stream-ordered, nothing pends here
        case OpKind::ResetAccumulatedStats:  // PyTorch only warns under this backend
        case OpKind::Phase:
        case OpKind::CreatePool:  // cudaMallocAsync has one pool: private pools route nowhere here
        case OpKind::BeginAllocateToPool:
        case OpKind::EndAllocateToPool:
        case OpKind::ReleasePool:
            break;
        }
    }
    return result;
}

}  // namespace allocscope::alloc
