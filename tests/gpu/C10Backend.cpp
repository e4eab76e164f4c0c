#include "tests/gpu/C10Backend.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <algorithm>

// libtorch_cuda registers c10's "has primary context" hook when it loads (CUDAHooks.cpp); c10
// alone keeps a stub that throws, and c10 calls it at the end of insert_events (MaybeSetDevice),
// i.e. at every free of a block used on another stream. The race links c10 without libtorch, so
// it registers the hook itself. Declared here as libtorch itself declares it (no header has it).
namespace c10::cuda::_internal {
void setHasPrimaryContext(bool (*func)(DeviceIndex));
}

namespace allocscope::gpu {

namespace {

// The race's process always holds the primary context: CudaDevice creates it before c10 runs.
bool primaryContextHeld(c10::DeviceIndex /*device*/) { return true; }

namespace c10alloc = c10::cuda::CUDACachingAllocator;

// c10's StatArray and ours are both {aggregate, small, large} x {current, peak, allocated, freed}.
template <typename C10StatArray>
void copyStats(const C10StatArray& from, alloc::StatArray& to) {
    for (std::size_t i = 0; i < to.size(); ++i) {
        to[i].current = from[i].current;
        to[i].peak = from[i].peak;
        to[i].allocated = from[i].allocated;
        to[i].freed = from[i].freed;
    }
}

template <typename C10Stat>
void copyStat(const C10Stat& from, alloc::Stat& to) {
    to.current = from.current;
    to.peak = from.peak;
    to.allocated = from.allocated;
    to.freed = from.freed;
}

}  // namespace

C10Backend::C10Backend() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
    c10::cuda::_internal::setHasPrimaryContext(&primaryContextHeld);
    c10alloc::get()->init(devices);
}

std::uint64_t C10Backend::allocate(std::uint64_t size) {
    return reinterpret_cast<std::uint64_t>(c10alloc::get()->raw_alloc(size));
}

std::uint64_t C10Backend::allocate(std::uint64_t size, std::uint64_t stream) {
    return reinterpret_cast<std::uint64_t>(c10alloc::get()->raw_alloc_with_stream(size, reinterpret_cast<cudaStream_t>(stream)));
}

void C10Backend::release(std::uint64_t pointer) { c10alloc::get()->raw_delete(reinterpret_cast<void*>(pointer)); }

void C10Backend::recordStream(std::uint64_t pointer, std::uint64_t stream) {
    void* data = reinterpret_cast<void*>(pointer);
    c10::DataPtr borrowed(data, data, c10alloc::get()->raw_deleter(), c10::Device(c10::DeviceType::CUDA, 0));
    c10alloc::get()->recordStream(borrowed, c10::cuda::getStreamFromExternal(reinterpret_cast<cudaStream_t>(stream), 0));
    static_cast<void>(borrowed.release_context());  // the block stays c10's: raw_delete frees it
}

void C10Backend::emptyCache() { c10alloc::get()->emptyCache(); }

std::string C10Backend::name() const { return c10alloc::get()->name(); }

alloc::DeviceStats C10Backend::stats() const {
    const auto c10 = c10alloc::get()->getDeviceStats(0);
    alloc::DeviceStats ours;
    copyStats(c10.allocation, ours.allocation);
    copyStats(c10.segment, ours.segment);
    copyStats(c10.active, ours.active);
    copyStats(c10.inactive_split, ours.inactive_split);
    copyStats(c10.allocated_bytes, ours.allocated_bytes);
    copyStats(c10.reserved_bytes, ours.reserved_bytes);
    copyStats(c10.active_bytes, ours.active_bytes);
    copyStats(c10.inactive_split_bytes, ours.inactive_split_bytes);
    copyStats(c10.requested_bytes, ours.requested_bytes);
    copyStat(c10.oversize_allocations, ours.oversize_allocations);
    copyStat(c10.oversize_segments, ours.oversize_segments);
    ours.num_alloc_retries = c10.num_alloc_retries;
    ours.num_ooms = c10.num_ooms;
    ours.num_sync_all_streams = c10.num_sync_all_streams;
    ours.num_device_alloc = c10.num_device_alloc;
    ours.num_device_free = c10.num_device_free;
    ours.max_split_size = static_cast<std::int64_t>(c10.max_split_size);
    return ours;
}

std::vector<alloc::SegmentInfo> C10Backend::segments() const {
    const auto snapshot = c10alloc::get()->snapshot();
    std::vector<alloc::SegmentInfo> out;
    for (const auto& segment : snapshot.segments) {
        if (segment.device != 0) continue;
        alloc::SegmentInfo info;
        info.address = static_cast<std::uint64_t>(segment.address);
        info.totalSize = static_cast<std::uint64_t>(segment.total_size);
        info.allocatedSize = static_cast<std::uint64_t>(segment.allocated_size);
        info.activeSize = static_cast<std::uint64_t>(segment.active_size);
        info.requestedSize = static_cast<std::uint64_t>(segment.requested_size);
        info.stream = reinterpret_cast<std::uint64_t>(segment.stream);
        info.pool = segment.is_large ? alloc::PoolKind::Large : alloc::PoolKind::Small;
        info.isExpandable = segment.is_expandable;
        std::uint64_t address = info.address;
        for (const auto& block : segment.blocks) {
            alloc::BlockInfo b;
            b.address = address;
            b.size = static_cast<std::uint64_t>(block.size);
            b.requestedSize = static_cast<std::uint64_t>(block.requested_size);
            b.state = block.allocated ? alloc::BlockState::ActiveAllocated
                                      : (block.active ? alloc::BlockState::ActivePendingFree : alloc::BlockState::Inactive);
            address += b.size;
            info.blocks.push_back(b);
        }
        out.push_back(std::move(info));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
    return out;
}

}  // namespace allocscope::gpu
