#pragma once
// Which streams each block of a real-CUDA device was used on (record_stream), and the frees
// waiting for those streams: c10's stream_uses, insert_events and process_events. A block freed
// after uses on other streams is pending in the allocator; each use stream gets an event at the
// free (alloc::StreamFreeQueue), and the free completes once every event has passed.
// CUDA-free header; without the CUDA backend this class is never built (simulated devices have
// no streams to wait for).
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "allocator/core/Event.h"

namespace allocscope::torchabi {

class TorchStreamUses {
public:
    using Done = std::function<void(std::uint64_t address)>;

    explicit TorchStreamUses(int device);
    ~TorchStreamUses();
    TorchStreamUses(const TorchStreamUses&) = delete;
    TorchStreamUses& operator=(const TorchStreamUses&) = delete;

    // Whether this build can wait for real streams (the CUDA backend is built in).
    static bool supported();

    void allocated(std::uint64_t address, alloc::StreamId stream);
    // record_stream: a use on `stream` (ignored for the block's own stream, as c10 does).
    void used(std::uint64_t address, alloc::StreamId stream);
    // free(): marks each use stream when the block had uses (the allocator keeps it pending).
    void freed(std::uint64_t address);
    // The pending frees whose streams have all passed their marks (process_events).
    void poll(const Done& done);
    // Waits for every mark (synchronize_and_free_events): all pending frees are safe to reuse.
    void drain(const Done& done);
    bool empty() const;

    class Queue;

private:
    std::unordered_map<std::uint64_t, alloc::StreamId> streamOf_;
    std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> uses_;
    std::unique_ptr<Queue> queue_;
};

}  // namespace allocscope::torchabi
