#pragma once
// The contestants of the GPU race (tests/benchmarks/bench_gpu_race.cpp) and the pass that times
// them. Each side offers alloc / free / recordStream / release on the race's streams; the pass
// is one template, so every side runs the same loop and pays the same harness costs.
//
//  - C10Side: PyTorch's c10 caching allocator, which polls and records its own events.
//  - AllocScopeSide<StreamFreeQueue>: AllocScope on CudaDevice; the harness does what c10's
//    allocator does itself around malloc and free, through the product's StreamFreeQueue:
//    poll before each malloc (process_events), mark the free of a block used on another stream
//    (insert_events).
//  - AllocScopeSide<SimulatedEvents>: the same allocator on SimulatedDevice, the baseline: no
//    CUDA call at all, events are a list that Release marks complete.
// CUDA-free header.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/device/cuda/StreamFreeQueue.h"
#include "tests/gpu/RaceOps.h"
#include "tests/gpu/RaceStreams.h"

namespace allocscope::gpu {

// Pending frees of the simulated baseline, with StreamFreeQueue's interface: inserted in
// order, complete once released.
class SimulatedEvents {
public:
    void insert(std::uint64_t address, const std::uint64_t* /*streams*/, std::size_t /*count*/) { addresses_.push_back(address); }
    template <class Done>
    void poll(Done&& done) {
        if (ready_ == 0) return;
        for (std::size_t i = 0; i < ready_; ++i) done(addresses_[i]);
        addresses_.erase(addresses_.begin(), addresses_.begin() + static_cast<std::ptrdiff_t>(ready_));
        ready_ = 0;
    }
    template <class Done>
    void drain(Done&& done) {
        ready_ = addresses_.size();
        poll(done);
    }
    bool empty() const { return addresses_.empty(); }
    void releaseAll() { ready_ = addresses_.size(); }

private:
    std::vector<std::uint64_t> addresses_;
    std::size_t ready_ = 0;
};

// Nanoseconds of an instrumented AllocScope pass (the breakdown; clock reads included).
struct SideTimes {
    std::uint64_t allocatorNs = 0;  // inside CachingAllocator::malloc / free / recordStream
    std::uint64_t insertNs = 0;     // marking frees (insert)
    std::uint64_t pollNs = 0;       // poll before each malloc, completeNs included
    std::uint64_t completeNs = 0;   // inside poll: the allocator completing the frees
};

template <typename Events, bool Timing = false>
class AllocScopeSide {
    static constexpr bool kReal = std::is_same_v<Events, alloc::StreamFreeQueue>;

public:
    // `streams`: the real streams (CUDA side; null for the simulated one); `handles`: stream ids.
    AllocScopeSide(alloc::CachingAllocator& allocator, Events& events, RaceStreams* streams, const std::uint64_t* handles)
        : allocator_(allocator), events_(events), streams_(streams), handles_(handles) {}

    std::uint64_t alloc(std::uint64_t size, std::uint8_t stream) {
        if constexpr (Timing) {
            if (!events_.empty()) timedPoll();
        } else {
            events_.poll([this](std::uint64_t address) { allocator_.completePendingFree(address); });
        }
        const std::uint64_t start = Timing ? now() : 0;
        const std::optional<std::uint64_t> address = allocator_.malloc(size, handles_[stream]);
        if (Timing) times.allocatorNs += now() - start;
        if (!address) failed = true;
        return address.value_or(0);
    }
    void free(std::uint64_t address, std::uint8_t useStream) {
        const std::uint64_t start = Timing ? now() : 0;
        if (!allocator_.free(address)) failed = true;
        if (Timing) times.allocatorNs += now() - start;
        if (useStream == 0) return;
        const std::uint64_t marked = Timing ? now() : 0;
        events_.insert(address, &handles_[useStream], 1);  // insert_events
        if (Timing) times.insertNs += now() - marked;
    }
    void recordStream(std::uint64_t address, std::uint8_t stream) {
        const std::uint64_t start = Timing ? now() : 0;
        if (!allocator_.recordStream(address, handles_[stream])) failed = true;
        if (Timing) times.allocatorNs += now() - start;
    }
    // The real streams exist only for the CUDA side; the simulated one releases its list.
    void release() {
        if constexpr (kReal) {
            streams_->release();
            streams_->hold();
        } else {
            events_.releaseAll();
        }
    }
    void beginPass(bool useStreams) {
        if constexpr (kReal) {
            if (useStreams) streams_->hold();
        }
    }
    void endPass() {
        if constexpr (kReal) {
            streams_->release();
        } else {
            events_.releaseAll();
        }
    }
    // empty_cache: the marks are waited for (the streams run free by then), and the allocator
    // completes every pending free itself, as c10's synchronize_and_free_events does inside it.
    void emptyCache() {
        events_.drain([](std::uint64_t) {});
        allocator_.emptyCache();
    }

    bool failed = false;
    SideTimes times;

private:
    void timedPoll() {
        const std::uint64_t polled = now();
        events_.poll([this](std::uint64_t address) {
            const std::uint64_t before = now();
            allocator_.completePendingFree(address);
            times.completeNs += now() - before;
        });
        times.pollNs += now() - polled;
    }
    static std::uint64_t now() {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count());
    }
    alloc::CachingAllocator& allocator_;
    Events& events_;
    RaceStreams* streams_;
    const std::uint64_t* handles_;
};

// One pass over the first `count` ops, `inspect()` before the leftovers (live at op `count`)
// are freed; returns ns per timed op (Release ops and the stream work they do are not timed).
template <typename Side, typename Inspect>
double racePass(const RaceOps& race, std::size_t count, const std::vector<std::uint32_t>& leftover,
                std::vector<std::uint64_t>& pointers, std::vector<std::uint8_t>& uses, Side& side, Inspect inspect) {
    using Clock = std::chrono::steady_clock;
    side.beginPass(race.streams);
    Clock::duration untimed{};
    const auto start = Clock::now();
    for (std::size_t i = 0; i < count; ++i) {
        const RaceOp& op = race.ops[i];
        switch (op.kind) {
        case RaceKind::Alloc:
            pointers[op.id] = side.alloc(op.size, op.stream);
            uses[op.id] = 0;
            break;
        case RaceKind::Free: side.free(pointers[op.id], uses[op.id]); break;
        case RaceKind::RecordStream:
            side.recordStream(pointers[op.id], op.stream);
            uses[op.id] = op.stream;
            break;
        case RaceKind::Release: {
            const auto before = Clock::now();
            side.release();
            untimed += Clock::now() - before;
            break;
        }
        }
    }
    const auto paused = Clock::now();
    inspect();
    const auto resumed = Clock::now();
    for (std::uint32_t id : leftover) side.free(pointers[id], uses[id]);
    const auto stop = Clock::now();
    side.endPass();
    const auto timed = (stop - start) - untimed - (resumed - paused);
    const std::size_t done = race.timedOps(count) + leftover.size();
    return std::chrono::duration<double, std::nano>(timed).count() / static_cast<double>(done);
}

struct PassTimes {
    std::vector<double> ns;
    double best() const { return ns.empty() ? 0 : *std::min_element(ns.begin(), ns.end()); }
    double median() const {
        if (ns.empty()) return 0;
        std::vector<double> sorted = ns;
        std::sort(sorted.begin(), sorted.end());
        const std::size_t mid = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
};

}  // namespace allocscope::gpu
