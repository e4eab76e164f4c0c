#pragma once
// Real CUDA streams and events behind a program's stream ids, record_stream and pending frees,
// for runs on CudaDevice. PyTorch (reference: record_stream / insert_events / process_events):
// record_stream(block, s) adds s to the block's stream uses; free() of a block with uses records
// one cudaEvent per use stream and keeps the block pending until every event has completed
// (cudaEventQuery), synchronize / empty_cache wait for all of them.
//
// Here, around each program op (before(op) / after(op)):
//   alloc on stream s != 0   the stream is created (cudaStreamCreate) on first use;
//   record_stream(id, s)     (s not the block's own stream, which PyTorch ignores) a real use of
//                            the block on s: cudaMemsetAsync of the tensor on s (when touching);
//   free(id) with uses       cudaEventRecord on each use stream (as insert_events);
//   complete_pending(id)     the program says the events finished: cudaEventQuery each; one still
//                            running is waited for (cudaEventSynchronize) before the allocator
//                            may hand the block out again, and counted;
//   synchronize/empty_cache  cudaDeviceSynchronize first; every recorded event is then complete.
// The streams are blocking streams, so the legacy default stream (cudaMalloc, cudaMemset of new
// segments) is ordered with them: a block reused after an allocator-internal synchronisation
// (the OOM retry) is never written while a use on another stream still runs.
//
// Not thread-safe. Every CUDA call is checked (CudaError). CUDA-free header.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "allocator/core/Op.h"

namespace allocscope::alloc {

struct CudaStreamEventCounters {
    std::uint64_t streams = 0;         // cudaStreamCreate calls
    std::uint64_t uses = 0;            // cudaMemsetAsync on a use stream (record_stream)
    std::uint64_t eventsRecorded = 0;  // cudaEventRecord at a free with stream uses
    std::uint64_t eventsDone = 0;      // already complete when the program completed the free
    std::uint64_t eventsWaited = 0;    // still running then: waited for
    std::uint64_t syncs = 0;           // cudaDeviceSynchronize for synchronize / empty_cache
};

class CudaStreamEvents {
public:
    // `realAddress(id)`: the real device address of a live tensor (nullopt: none, or size 0).
    using AddressLookup = std::function<std::optional<std::uint64_t>(std::uint64_t id)>;

    // `touch`: write the tensor on its use streams (false: events and streams only).
    CudaStreamEvents(int device, bool touch, AddressLookup realAddress);
    // Waits for the device, destroys every event and stream. Never throws.
    ~CudaStreamEvents();
    CudaStreamEvents(const CudaStreamEvents&) = delete;
    CudaStreamEvents& operator=(const CudaStreamEvents&) = delete;

    void before(const Op& op);
    void after(const Op& op);
    const CudaStreamEventCounters& counters() const;

    class State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace allocscope::alloc
