#pragma once
// The real GPU behind the caching allocator: cudaMalloc / cudaFree for ordinary segments and the
// CUDA virtual-memory API for expandable segments (cuMemAddressReserve, then per page cuMemCreate
// + cuMemMap, cuMemSetAccess over the mapped range; cuMemUnmap + cuMemRelease, cuMemAddressFree).
// Driver entry points are fetched at run time; libcuda is never linked.
//
// Two modes:
//  - direct: the allocator sees the real device pointers, so its decisions (best fit breaks
//    ties between equal-size blocks by address) follow the real driver's placement;
//  - address translation (options.addressDecider set, e.g. a SimulatedDevice with a replay's
//    address oracle): the decider chooses every address the allocator sees, so decisions equal
//    the simulated run's, while this class backs each decided segment with real memory and
//    translates (realAddress()). It counts how often the real addresses would have ordered a new
//    segment differently among the live ones (orderDisagreements()): each such case is a point
//    where a run on real pointers could have decided differently.
//
// Every CUDA call is checked: an unexpected error throws CudaError (the allocator must never go
// on with bookkeeping the device disagrees with). Out of memory is reported as the interface
// says (nullopt / false). Not thread-safe, like the allocator that owns it.
//
// CUDA-free header: tests and benchmarks include it without the toolkit's include paths.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "allocator/core/DeviceMemory.h"

namespace allocscope::alloc {

struct CudaDeviceOptions {
    int device = 0;
    // cudaMemset every newly obtained segment / newly mapped page range, so the memory is really
    // backed (first-touch costs show up) and memcheck sees it initialised.
    bool touch = false;
    // Translation mode: the device that decides addresses (must outlive this object). Its
    // totalMemory()/freeMemory() are also the ones reported, so fractions and OOM messages
    // match the simulated run.
    DeviceMemory* addressDecider = nullptr;
    // Add up the time spent in each kind of device call (CudaDeviceCounters::*Ns): the GPU
    // race's breakdown. Off, no clock is read.
    bool timing = false;
};

struct CudaDeviceCounters {
    std::uint64_t cudaMallocCalls = 0;
    std::uint64_t cudaFreeCalls = 0;
    std::uint64_t reservations = 0;       // cuMemAddressReserve calls that succeeded
    std::uint64_t reservationsFreed = 0;  // cuMemAddressFree calls
    std::uint64_t pagesMapped = 0;        // cuMemCreate + cuMemMap, one per page
    std::uint64_t pagesUnmapped = 0;
    std::uint64_t heldBytes = 0;          // physical bytes held now (segments + mapped pages)
    std::uint64_t peakHeldBytes = 0;
    std::uint64_t orderDisagreements = 0; // translation mode only
    std::uint64_t realOomDivergences = 0; // translation mode: decider said yes, the GPU said OOM
    // With CudaDeviceOptions::timing: nanoseconds inside this class's DeviceMemory calls (all of
    // it, bookkeeping included) and inside the CUDA calls they make, by kind.
    std::uint64_t deviceCallNs = 0;
    std::uint64_t deviceCalls = 0;
    std::uint64_t cudaMallocNs = 0;
    std::uint64_t cudaFreeNs = 0;
    std::uint64_t reserveNs = 0;  // cuMemAddressReserve + cuMemAddressFree
    std::uint64_t mapNs = 0;      // cuMemCreate + cuMemMap + cuMemSetAccess
    std::uint64_t unmapNs = 0;    // the stream synchronisation + cuMemUnmap + cuMemRelease
};

class CudaDevice final : public DeviceMemory {
public:
    // Selects the device and creates its primary context. Throws CudaError when there is no
    // driver / no such GPU (callers that may run without a GPU ask unavailableReason() first).
    explicit CudaDevice(CudaDeviceOptions options = {});
    // Gives back whatever is still held (the allocator normally released it all). Never throws.
    ~CudaDevice() override;
    CudaDevice(const CudaDevice&) = delete;
    CudaDevice& operator=(const CudaDevice&) = delete;

    // nullopt when device `device` can be used; otherwise why not ("no GPU: ...").
    static std::optional<std::string> unavailableReason(int device = 0);

    std::string name() const override;
    std::uint64_t totalMemory() const override;
    std::uint64_t freeMemory() const override;
    std::optional<std::uint64_t> allocateSegment(std::uint64_t size, StreamId stream) override;
    void freeSegment(std::uint64_t address, std::uint64_t size) override;
    std::optional<std::uint64_t> reserveAddressRange(std::uint64_t size, std::uint64_t pageSize,
                                                     StreamId stream) override;
    void releaseAddressRange(std::uint64_t base, std::uint64_t size) override;
    bool mapPages(std::uint64_t address, std::uint64_t size) override;
    void unmapPages(std::uint64_t address, std::uint64_t size) override;

    // The real device pointer behind an address the allocator handed out (identity in direct
    // mode); nullopt if the address lies in no live segment / reservation.
    std::optional<std::uint64_t> realAddress(std::uint64_t address) const;
    // The driver's minimum allocation granularity for the virtual-memory API (2 MiB on current
    // GPUs); 0 when the driver lacks that API (expandable segments then throw).
    std::uint64_t granularity() const;
    bool translating() const;
    std::uint64_t orderDisagreements() const;
    const CudaDeviceCounters& counters() const;
    int deviceIndex() const;

    class State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace allocscope::alloc
