#include "allocator/device/cuda/CudaDevice.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "allocator/core/HexAddress.h"
#include "allocator/device/cuda/CudaDriverApi.h"
#include "allocator/device/cuda/CudaError.h"
#include "allocator/device/cuda/CudaRuntimeCheck.h"

namespace allocscope::alloc {

namespace {

// One live cudaMalloc'd segment or virtual reservation, keyed (in State::ranges) by the address
// the allocator sees.
struct Range {
    std::uint64_t real = 0;      // the real device address (= the key in direct mode)
    std::uint64_t size = 0;
    std::uint64_t pageSize = 0;  // 0: a cudaMalloc'd segment; else a reservation's page size
    StreamId stream = 0;
    std::vector<CUmemGenericAllocationHandle> pages;  // reservation: handle per page, 0 = unmapped
};

// Adds the time from construction to destruction to *sink; reads no clock when sink is null
// (timing off).
class CallTimer {
public:
    explicit CallTimer(std::uint64_t* sink) : sink_(sink), start_(sink != nullptr ? now() : 0) {}
    ~CallTimer() {
        if (sink_ != nullptr) *sink_ += now() - start_;
    }
    CallTimer(const CallTimer&) = delete;
    CallTimer& operator=(const CallTimer&) = delete;

private:
    static std::uint64_t now() {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count());
    }
    std::uint64_t* sink_;
    std::uint64_t start_;
};

}  // namespace

class CudaDevice::State {
public:
    CudaDeviceOptions options;
    std::string gpuName;
    std::uint64_t total = 0;
    std::uint64_t granularity = 0;
    std::string vmmUnavailable;  // why expandable segments cannot work here ("" = they can)
    const CudaDriverApi* driver = nullptr;
    std::map<std::uint64_t, Range> ranges;
    // Bases of live ranges, decided and real, to compare the order they put a new one in.
    std::set<std::uint64_t> decidedBases;
    std::set<std::uint64_t> realBases;
    CudaDeviceCounters counters;

    // Where a CallTimer adds its time: the counter when timing, nowhere otherwise.
    std::uint64_t* timer(std::uint64_t& counter) { return options.timing ? &counter : nullptr; }
    // The whole of one DeviceMemory call.
    std::uint64_t* wholeCall() {
        if (!options.timing) return nullptr;
        ++counters.deviceCalls;
        return &counters.deviceCallNs;
    }

    void select() const { throwIfFailed(cudaSetDevice(options.device), [&] { return "cudaSetDevice(" + std::to_string(options.device) + ")"; }); }

    // The live range containing [address, address + size), or ranges.end().
    std::map<std::uint64_t, Range>::iterator locate(std::uint64_t address, std::uint64_t size) {
        auto it = ranges.upper_bound(address);
        if (it == ranges.begin()) return ranges.end();
        --it;
        if (address - it->first + size > it->second.size) return ranges.end();
        return it;
    }

    void hold(std::uint64_t bytes) {
        counters.heldBytes += bytes;
        if (counters.heldBytes > counters.peakHeldBytes) counters.peakHeldBytes = counters.heldBytes;
    }

    // The two base sets serve only translation mode's order check; direct mode skips them.
    void insert(std::uint64_t key, Range range) {
        if (options.addressDecider != nullptr) {
            // Same rank among the live ranges in both address spaces = same relative order.
            const auto decidedRank = std::distance(decidedBases.begin(), decidedBases.lower_bound(key));
            const auto realRank = std::distance(realBases.begin(), realBases.lower_bound(range.real));
            if (decidedRank != realRank) ++counters.orderDisagreements;
            decidedBases.insert(key);
            realBases.insert(range.real);
        }
        ranges.emplace(key, std::move(range));
    }

    void erase(std::map<std::uint64_t, Range>::iterator it) {
        if (options.addressDecider != nullptr) {
            decidedBases.erase(it->first);
            realBases.erase(it->second.real);
        }
        ranges.erase(it);
    }

    void touch(std::uint64_t real, std::uint64_t size, const char* what) const {
        if (!options.touch) return;
        throwIfFailed(cudaMemset(reinterpret_cast<void*>(real), 0, size), [&] { return std::string("cudaMemset of ") + what + " " + hexAddress(real) + " (" + bytesText(size) + ")"; });
    }

    const CudaDriverApi& vmm() const {
        if (driver == nullptr) throw CudaError("expandable segments need the CUDA virtual-memory API: " + vmmUnavailable);
        return *driver;
    }

    CUmemAllocationProp allocationProp() const {
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = options.device;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
        return prop;
    }

    // Unmapping is synchronous for the GPU: kernels still using the pages must have finished
    // (PyTorch synchronises the segment's stream first). Stream ids that are not real streams
    // (replays) fall back to the whole device.
    void synchronizeFor(StreamId stream) const {
        if (stream == 0) {
            throwIfFailed(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize(default stream) before cuMemUnmap");
        } else {
            throwIfFailed(cudaDeviceSynchronize(), "cudaDeviceSynchronize before cuMemUnmap");
        }
    }

    // Unmaps and releases pages [first, first + count) of a reservation. `bestEffort`: ignore
    // errors (destructor / cleanup after a failure already being reported).
    void unmapRange(Range& range, std::uint64_t first, std::uint64_t count, bool bestEffort) {
        for (std::uint64_t i = first; i < first + count; ++i) {
            CUmemGenericAllocationHandle& handle = range.pages[i];
            if (handle == 0) continue;
            const CUdeviceptr page = range.real + i * range.pageSize;
            const CUresult unmapped = driver->memUnmap(page, range.pageSize);
            const CUresult released = driver->memRelease(handle);
            handle = 0;
            counters.heldBytes -= range.pageSize;
            ++counters.pagesUnmapped;
            if (!bestEffort) {
                driver->check(unmapped, "cuMemUnmap(" + hexAddress(page) + ", " + bytesText(range.pageSize) + ")");
                driver->check(released, "cuMemRelease(page handle at " + hexAddress(page) + ")");
            }
        }
    }
};

std::optional<std::string> CudaDevice::unavailableReason(int device) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        cudaGetLastError();
        return std::string("no GPU: ") + cudaGetErrorString(status);
    }
    if (device < 0 || device >= count) {
        return "no GPU: device " + std::to_string(device) + " does not exist (" + std::to_string(count) + " found)";
    }
    return std::nullopt;
}

CudaDevice::CudaDevice(CudaDeviceOptions options) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.options = options;
    if (auto reason = unavailableReason(options.device)) throw CudaError(*reason);
    s.select();
    // cudaFree(nullptr) creates the primary context now, so the driver calls below have one.
    throwIfFailed(cudaFree(nullptr), "cudaFree(nullptr) (context creation)");
    cudaDeviceProp prop{};
    throwIfFailed(cudaGetDeviceProperties(&prop, options.device), "cudaGetDeviceProperties");
    s.gpuName = prop.name;
    s.total = prop.totalGlobalMem;

    // The virtual-memory API is optional: without it only expandable segments fail, loudly.
    try {
        const CudaDriverApi& api = CudaDriverApi::instance();
        CUdevice handle = 0;
        api.check(api.deviceGet(&handle, options.device), "cuDeviceGet");
        int vmmSupported = 0;
        api.check(api.deviceGetAttribute(&vmmSupported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, handle),
                  "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
        if (vmmSupported == 0) {
            s.vmmUnavailable = std::string(prop.name) + " does not support virtual memory management";
            return;
        }
        const CUmemAllocationProp allocProp = s.allocationProp();
        size_t granularity = 0;
        api.check(api.memGetAllocationGranularity(&granularity, &allocProp, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                  "cuMemGetAllocationGranularity");
        s.granularity = granularity;
        s.driver = &api;
    } catch (const CudaError& error) {
        s.vmmUnavailable = error.what();
    }
}

CudaDevice::~CudaDevice() {
    State& s = *state_;
    cudaSetDevice(s.options.device);
    for (auto& [key, range] : s.ranges) {
        if (range.pageSize == 0) {
            cudaFree(reinterpret_cast<void*>(range.real));
        } else if (s.driver != nullptr) {
            s.unmapRange(range, 0, range.pages.size(), true);
            s.driver->memAddressFree(range.real, range.size);
        }
    }
    cudaGetLastError();
}

std::string CudaDevice::name() const {
    std::string text = "CUDA " + state_->gpuName + " (cuda:" + std::to_string(state_->options.device) + ")";
    if (state_->options.addressDecider != nullptr) {
        text += ", addresses from " + state_->options.addressDecider->name();
    }
    return text;
}

std::uint64_t CudaDevice::totalMemory() const {
    if (state_->options.addressDecider != nullptr) return state_->options.addressDecider->totalMemory();
    return state_->total;
}

std::uint64_t CudaDevice::freeMemory() const {
    if (state_->options.addressDecider != nullptr) return state_->options.addressDecider->freeMemory();
    state_->select();
    size_t freeBytes = 0;
    size_t totalBytes = 0;
    throwIfFailed(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
    return freeBytes;
}

std::optional<std::uint64_t> CudaDevice::allocateSegment(std::uint64_t size, StreamId stream) {
    State& s = *state_;
    const CallTimer whole(s.wholeCall());
    DeviceMemory* decider = s.options.addressDecider;
    std::optional<std::uint64_t> decided;
    if (decider != nullptr) {
        decided = decider->allocateSegment(size, stream);
        if (!decided) return std::nullopt;  // the simulated device is out of memory: so are we
    }
    s.select();
    void* pointer = nullptr;
    cudaError_t status = cudaSuccess;
    {
        const CallTimer call(s.timer(s.counters.cudaMallocNs));
        status = cudaMalloc(&pointer, size);
    }
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();  // cudaMalloc's OOM is not sticky; clear it
        if (decider != nullptr) {
            decider->freeSegment(*decided, size);
            ++s.counters.realOomDivergences;
        }
        return std::nullopt;
    }
    if (status != cudaSuccess) {
        if (decider != nullptr) decider->freeSegment(*decided, size);
        throwIfFailed(status, [&] { return "cudaMalloc(" + bytesText(size) + ")"; });
    }
    const auto real = reinterpret_cast<std::uint64_t>(pointer);
    const std::uint64_t key = decided.value_or(real);
    if (s.locate(key, 1) != s.ranges.end()) {
        cudaFree(pointer);
        throw CudaError("address " + hexAddress(key) + " of a new segment lies in a live segment or reservation");
    }
    ++s.counters.cudaMallocCalls;
    s.hold(size);
    s.insert(key, Range{real, size, 0, stream, {}});
    s.touch(real, size, "segment");
    return key;
}

void CudaDevice::freeSegment(std::uint64_t address, std::uint64_t size) {
    State& s = *state_;
    const CallTimer whole(s.wholeCall());
    auto it = s.ranges.find(address);
    if (it == s.ranges.end() || it->second.pageSize != 0) {
        throw CudaError("cudaFree of " + hexAddress(address) + ": not a live cudaMalloc'd segment");
    }
    if (it->second.size != size) {
        throw CudaError("cudaFree of " + hexAddress(address) + ": segment holds " + bytesText(it->second.size) +
                        ", the allocator says " + bytesText(size));
    }
    const std::uint64_t real = it->second.real;
    s.erase(it);
    s.counters.heldBytes -= size;
    ++s.counters.cudaFreeCalls;
    if (s.options.addressDecider != nullptr) s.options.addressDecider->freeSegment(address, size);
    s.select();
    const CallTimer call(s.timer(s.counters.cudaFreeNs));
    throwIfFailed(cudaFree(reinterpret_cast<void*>(real)), [&] { return "cudaFree(" + hexAddress(real) + ", " + bytesText(size) + ")"; });
}

std::optional<std::uint64_t> CudaDevice::reserveAddressRange(std::uint64_t size, std::uint64_t pageSize,
                                                             StreamId stream) {
    State& s = *state_;
    const CallTimer whole(s.wholeCall());
    const CudaDriverApi& api = s.vmm();
    if (pageSize == 0 || pageSize % s.granularity != 0) {
        throw CudaError("expandable segment page size " + bytesText(pageSize) +
                        " is not a multiple of the driver's allocation granularity (" + bytesText(s.granularity) + ")");
    }
    if (size == 0 || size % pageSize != 0) {
        throw CudaError("address reservation of " + bytesText(size) + " is not a whole number of " +
                        bytesText(pageSize) + " pages");
    }
    DeviceMemory* decider = s.options.addressDecider;
    std::optional<std::uint64_t> decided;
    if (decider != nullptr) {
        decided = decider->reserveAddressRange(size, pageSize, stream);
        if (!decided) return std::nullopt;
    }
    s.select();
    CUdeviceptr pointer = 0;
    CUresult result = CUDA_SUCCESS;
    {
        const CallTimer call(s.timer(s.counters.reserveNs));
        result = api.memAddressReserve(&pointer, size, 0, 0, 0);
    }
    if (result == CUDA_ERROR_OUT_OF_MEMORY) {  // virtual address space exhausted
        if (decider != nullptr) {
            decider->releaseAddressRange(*decided, size);
            ++s.counters.realOomDivergences;
        }
        return std::nullopt;
    }
    if (result != CUDA_SUCCESS) {
        if (decider != nullptr) decider->releaseAddressRange(*decided, size);
        api.check(result, "cuMemAddressReserve(" + bytesText(size) + ")");
    }
    const std::uint64_t key = decided.value_or(pointer);
    if (s.locate(key, 1) != s.ranges.end()) {
        api.memAddressFree(pointer, size);
        throw CudaError("address " + hexAddress(key) + " of a new reservation lies in a live segment or reservation");
    }
    ++s.counters.reservations;
    s.insert(key, Range{pointer, size, pageSize, stream, std::vector<CUmemGenericAllocationHandle>(size / pageSize, 0)});
    return key;
}

void CudaDevice::releaseAddressRange(std::uint64_t base, std::uint64_t size) {
    State& s = *state_;
    const CallTimer whole(s.wholeCall());
    const CudaDriverApi& api = s.vmm();
    auto it = s.ranges.find(base);
    if (it == s.ranges.end() || it->second.pageSize == 0) {
        throw CudaError("cuMemAddressFree of " + hexAddress(base) + ": not a live reservation");
    }
    if (it->second.size != size) {
        throw CudaError("cuMemAddressFree of " + hexAddress(base) + ": reservation spans " + bytesText(it->second.size) +
                        ", the allocator says " + bytesText(size));
    }
    Range range = std::move(it->second);
    s.erase(it);
    std::uint64_t stillMapped = 0;
    for (CUmemGenericAllocationHandle handle : range.pages) stillMapped += handle != 0 ? 1 : 0;
    s.select();
    if (stillMapped != 0) {
        // The allocator releases a reservation only once every page is unmapped; anything else
        // means its books and the device disagree. Give the memory back, then say so.
        s.synchronizeFor(range.stream);
        s.unmapRange(range, 0, range.pages.size(), true);
        api.memAddressFree(range.real, range.size);
        throw CudaError("reservation " + hexAddress(base) + " released with " + std::to_string(stillMapped) +
                        " page(s) still mapped");
    }
    ++s.counters.reservationsFreed;
    if (s.options.addressDecider != nullptr) s.options.addressDecider->releaseAddressRange(base, size);
    const CallTimer call(s.timer(s.counters.reserveNs));
    api.check(api.memAddressFree(range.real, range.size), "cuMemAddressFree(" + hexAddress(range.real) + ", " + bytesText(size) + ")");
}

bool CudaDevice::mapPages(std::uint64_t address, std::uint64_t size) {
    State& s = *state_;
    const CallTimer whole(s.wholeCall());
    const CudaDriverApi& api = s.vmm();
    auto it = s.locate(address, size);
    if (it == s.ranges.end() || it->second.pageSize == 0) {
        throw CudaError("cuMemMap of " + hexAddress(address) + " (" + bytesText(size) + "): not inside a live reservation");
    }
    Range& range = it->second;
    const std::uint64_t offset = address - it->first;
    if (size == 0 || offset % range.pageSize != 0 || size % range.pageSize != 0) {
        throw CudaError("cuMemMap of " + hexAddress(address) + " (" + bytesText(size) + "): not whole " +
                        bytesText(range.pageSize) + " pages");
    }
    const std::uint64_t first = offset / range.pageSize;
    const std::uint64_t count = size / range.pageSize;
    for (std::uint64_t i = first; i < first + count; ++i) {
        if (range.pages[i] != 0) {
            throw CudaError("cuMemMap of " + hexAddress(address) + ": page " + hexAddress(it->first + i * range.pageSize) + " is already mapped");
        }
    }
    DeviceMemory* decider = s.options.addressDecider;
    if (decider != nullptr && !decider->mapPages(address, size)) return false;

    s.select();
    const CallTimer call(s.timer(s.counters.mapNs));
    const CUmemAllocationProp prop = s.allocationProp();
    // On any failure: give back the pages this call mapped, so nothing stays mapped.
    auto undo = [&](std::uint64_t mappedUpTo) {
        s.unmapRange(range, first, mappedUpTo - first, true);
        if (decider != nullptr) decider->unmapPages(address, size);
    };
    for (std::uint64_t i = first; i < first + count; ++i) {
        CUmemGenericAllocationHandle handle = 0;
        const CUresult created = api.memCreate(&handle, range.pageSize, &prop, 0);
        if (created == CUDA_ERROR_OUT_OF_MEMORY) {
            undo(i);
            if (decider != nullptr) ++s.counters.realOomDivergences;
            return false;
        }
        if (created != CUDA_SUCCESS) {
            undo(i);
            api.check(created, "cuMemCreate(" + bytesText(range.pageSize) + ")");
        }
        const CUdeviceptr page = range.real + i * range.pageSize;
        const CUresult mapped = api.memMap(page, range.pageSize, 0, handle, 0);
        if (mapped != CUDA_SUCCESS) {
            api.memRelease(handle);
            undo(i);
            api.check(mapped, "cuMemMap(" + hexAddress(page) + ", " + bytesText(range.pageSize) + ")");
        }
        range.pages[i] = handle;
        s.hold(range.pageSize);
        ++s.counters.pagesMapped;
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = s.options.device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    const CUdeviceptr realStart = range.real + offset;
    const CUresult granted = api.memSetAccess(realStart, size, &access, 1);
    if (granted != CUDA_SUCCESS) {
        undo(first + count);
        api.check(granted, "cuMemSetAccess(" + hexAddress(realStart) + ", " + bytesText(size) + ")");
    }
    s.touch(realStart, size, "mapped pages");
    return true;
}

void CudaDevice::unmapPages(std::uint64_t address, std::uint64_t size) {
    State& s = *state_;
    const CallTimer whole(s.wholeCall());
    s.vmm();
    auto it = s.locate(address, size);
    if (it == s.ranges.end() || it->second.pageSize == 0) {
        throw CudaError("cuMemUnmap of " + hexAddress(address) + " (" + bytesText(size) + "): not inside a live reservation");
    }
    Range& range = it->second;
    const std::uint64_t offset = address - it->first;
    if (size == 0 || offset % range.pageSize != 0 || size % range.pageSize != 0) {
        throw CudaError("cuMemUnmap of " + hexAddress(address) + " (" + bytesText(size) + "): not whole " +
                        bytesText(range.pageSize) + " pages");
    }
    const std::uint64_t first = offset / range.pageSize;
    const std::uint64_t count = size / range.pageSize;
    for (std::uint64_t i = first; i < first + count; ++i) {
        if (range.pages[i] == 0) {
            throw CudaError("cuMemUnmap of " + hexAddress(address) + ": page " + hexAddress(it->first + i * range.pageSize) + " is not mapped");
        }
    }
    s.select();
    {
        const CallTimer call(s.timer(s.counters.unmapNs));
        s.synchronizeFor(range.stream);
        s.unmapRange(range, first, count, false);
    }
    if (s.options.addressDecider != nullptr) s.options.addressDecider->unmapPages(address, size);
}

std::optional<std::uint64_t> CudaDevice::realAddress(std::uint64_t address) const {
    auto it = state_->locate(address, 1);
    if (it == state_->ranges.end()) return std::nullopt;
    return it->second.real + (address - it->first);
}

std::uint64_t CudaDevice::granularity() const { return state_->driver != nullptr ? state_->granularity : 0; }
bool CudaDevice::translating() const { return state_->options.addressDecider != nullptr; }
std::uint64_t CudaDevice::orderDisagreements() const { return state_->counters.orderDisagreements; }
const CudaDeviceCounters& CudaDevice::counters() const { return state_->counters; }
int CudaDevice::deviceIndex() const { return state_->options.device; }

}  // namespace allocscope::alloc
