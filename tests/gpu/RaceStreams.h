#pragma once
// The GPU race's two real streams, and the marking of pending frees each of the two_stream
// sequences (tests/gpu/RaceOps.h) races on AllocScope's side. CUDA-free header; RaceStreams.cpp needs the toolkit.
//
// Pending frees must complete at the same points in every run and every backend, or c10's and
// AllocScope's layouts would differ by timing alone. So while a pass runs, each stream is held
// by a host function that waits for the host (hold()): an event recorded on it cannot complete.
// release() lets both streams run to the end (every event recorded so far is then complete)
// and hold() holds them again. Between the two, cudaEventQuery answers "not ready" for every
// new event, as it would for a stream busy with kernels.
//
// AllocScope's side learns that a use stream has passed a free through the product's
// StreamFreeQueue (allocator/device/cuda/StreamFreeQueue.h: its markings, c10's insert_events /
// process_events); each two_stream sequence races one marking (twoStreamMarking below).
#include <cstdint>
#include <optional>
#include <string>

#include "allocator/device/cuda/StreamFreeQueue.h"

namespace allocscope::gpu {

class RaceStreams {
public:
    explicit RaceStreams(int device);
    ~RaceStreams();  // releases the streams if held, destroys them; never throws
    RaceStreams(const RaceStreams&) = delete;
    RaceStreams& operator=(const RaceStreams&) = delete;

    // index 0: the legacy default stream (0); 1, 2: the race's streams (cudaStream_t values).
    std::uint64_t handle(int index) const { return handles_[index]; }
    void hold();
    void release();

private:
    std::uint64_t handles_[3] = {0, 0, 0};
    bool held_ = false;
    std::uint64_t generation_ = 0;
};

// The race's two_stream sequences: the same ops, each with its own marking of pending frees.
// nullopt: not a two_stream sequence.
inline std::optional<alloc::StreamFreeQueue::Marking> twoStreamMarking(const std::string& sequence) {
    using Marking = alloc::StreamFreeQueue::Marking;
    if (sequence == "two_stream") return Marking::Mixed;  // the product's default
    if (sequence == "two_stream_ctr") return Marking::Counters;
    if (sequence == "two_stream_events") return Marking::Events;  // c10's own
    if (sequence == "two_stream_drv") return Marking::DriverEvents;
    if (sequence == "two_stream_drvtail") return Marking::DriverEventsTail;
    return std::nullopt;
}

}  // namespace allocscope::gpu
