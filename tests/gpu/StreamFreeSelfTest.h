#pragma once
// StreamFreeQueue on a real GPU, against the race's held streams (RaceStreams): run by the Qt
// suite test_gpu_stream_free (Skipped without a GPU) and at the start of bench_gpu_race (the GPU
// machine has no Qt). Returns "" or what went wrong. CUDA-free header; needs a GPU to pass.
#include <cstdint>
#include <string>
#include <vector>

#include "allocator/device/cuda/StreamFreeQueue.h"
#include "tests/gpu/RaceStreams.h"

namespace allocscope::gpu {

inline std::string streamFreeQueueSelfTest(RaceStreams& streams, alloc::StreamFreeQueue::Marking wanted) {
    using alloc::StreamFreeQueue;
    StreamFreeQueue queue(0, wanted);
    const std::string name = StreamFreeQueue::describe(wanted);
    if (queue.marking() != wanted) return name + ": fell back to " + StreamFreeQueue::describe(queue.marking());
    const std::uint64_t one = streams.handle(1), two = streams.handle(2);
    const std::uint64_t both[2] = {one, two};
    std::vector<std::uint64_t> done;
    auto take = [&](std::uint64_t address) { done.push_back(address); };

    // Held streams pass nothing, however often they are asked; a free without a stream is not held.
    streams.hold();
    for (std::uint64_t a = 0x1000; a < 0x1000 + 40 * 0x100; a += 0x100) queue.insert(a, a % 0x200 == 0 ? &one : &two, 1);
    queue.insert(0x9000, both, 2);
    queue.insert(0xA000, nullptr, 0);
    for (int i = 0; i < 100; ++i) queue.poll(take);
    if (done != std::vector<std::uint64_t>{0xA000}) return name + ": held streams completed " + std::to_string(done.size()) + " frees";
    if (queue.size() != 41) return name + ": " + std::to_string(queue.size()) + " frees wait, 41 expected";
    // Released, the streams ran to their end: one poll completes all, each once, in order per stream.
    streams.release();
    done.clear();
    queue.poll(take);
    if (done.size() != 41 || !queue.empty()) return name + ": after the release one poll completed " + std::to_string(done.size()) + " of 41";
    std::uint64_t lastOne = 0, lastTwo = 0, shared = 0;
    for (std::uint64_t a : done) {
        if (a == 0x9000) {
            ++shared;
            continue;
        }
        std::uint64_t& last = a % 0x200 == 0 ? lastOne : lastTwo;
        if (a < last) return name + ": frees of one stream completed out of order";
        last = a;
    }
    if (shared != 1) return name + ": the block used on both streams completed " + std::to_string(shared) + " times";
    // drain() waits for the streams; polls once they were released pass nothing twice.
    streams.hold();
    queue.insert(0xB000, both, 2);
    queue.insert(0xC000, &one, 1);
    streams.release();
    done.clear();
    queue.drain(take);
    queue.poll(take);
    if (done != std::vector<std::uint64_t>{0xB000, 0xC000} && done != std::vector<std::uint64_t>{0xC000, 0xB000}) {
        return name + ": drain completed " + std::to_string(done.size()) + " frees, 2 expected";
    }
    if (!queue.empty()) return name + ": not empty after drain";
    return {};
}

}  // namespace allocscope::gpu
