#pragma once
// PyTorch's own c10 CUDA caching allocator, as the GPU race's baseline. Only this file's .cpp
// includes PyTorch headers (it is compiled only with ALLOCSCOPE_WITH_C10, against libc10_cuda);
// the rest of the race sees c10's statistics and snapshot converted into AllocScope's types, so
// comparing the two is a plain comparison of equal structs.
#include <cstdint>
#include <string>
#include <vector>

#include "allocator/core/DeviceStats.h"
#include "allocator/core/SegmentInfo.h"

namespace allocscope::gpu {

class C10Backend {
public:
    // Initialises c10's allocator for the visible devices. Its config comes from the process
    // environment (PYTORCH_CUDA_ALLOC_CONF), read by c10 itself at first use.
    C10Backend();

    // raw_alloc / raw_delete on the current (default) stream.
    std::uint64_t allocate(std::uint64_t size);
    // raw_alloc_with_stream on `stream` (a cudaStream_t as an integer).
    std::uint64_t allocate(std::uint64_t size, std::uint64_t stream);
    void release(std::uint64_t pointer);
    // Tensor.record_stream: recordStream on a DataPtr that names the raw block (c10 accepts only
    // pointers its own deleter owns) without owning it.
    void recordStream(std::uint64_t pointer, std::uint64_t stream);
    void emptyCache();

    // getDeviceStats(0), field by field into AllocScope's struct (all 122 keys).
    alloc::DeviceStats stats() const;
    // snapshot().segments of device 0, sorted by address, blocks in address order.
    std::vector<alloc::SegmentInfo> segments() const;
    // c10's name for the allocator in use ("native" / "cudaMallocAsync").
    std::string name() const;
};

}  // namespace allocscope::gpu
