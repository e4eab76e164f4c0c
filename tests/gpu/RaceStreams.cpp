#include "tests/gpu/RaceStreams.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/gpu/DriverEntry.h"
#include "tests/gpu/RaceWaitQueue.h"

namespace allocscope::gpu {

namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// The generation the held streams wait for. One RaceStreams per process (the race's), so a
// process-wide gate is enough; the host function gets its generation as its argument.
std::atomic<std::uint64_t> gOpened{0};

void CUDART_CB waitForGate(void* generation) {
    const auto wanted = reinterpret_cast<std::uintptr_t>(generation);
    for (std::uint64_t seen = gOpened.load(); seen < wanted; seen = gOpened.load()) gOpened.wait(seen);
}

std::uint64_t nowNs() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace

RaceStreams::RaceStreams(int device) {
    check(cudaSetDevice(device), "cudaSetDevice");
    for (int i = 1; i <= 2; ++i) {
        cudaStream_t stream = nullptr;
        // Non-blocking: the legacy default stream (cudaMalloc's) never waits for a held stream.
        check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        handles_[i] = reinterpret_cast<std::uint64_t>(stream);
    }
}

RaceStreams::~RaceStreams() {
    if (held_) {
        gOpened.store(generation_);
        gOpened.notify_all();
    }
    for (int i = 1; i <= 2; ++i) {
        auto* stream = reinterpret_cast<cudaStream_t>(handles_[i]);
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
    }
    cudaGetLastError();
}

void RaceStreams::hold() {
    if (held_) return;
    ++generation_;
    for (int i = 1; i <= 2; ++i) {
        check(cudaLaunchHostFunc(reinterpret_cast<cudaStream_t>(handles_[i]), waitForGate,
                                 reinterpret_cast<void*>(static_cast<std::uintptr_t>(generation_))),
              "cudaLaunchHostFunc");
    }
    held_ = true;
}

void RaceStreams::release() {
    if (!held_) return;
    gOpened.store(generation_);
    gOpened.notify_all();
    held_ = false;
    for (int i = 1; i <= 2; ++i) check(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(handles_[i])), "cudaStreamSynchronize");
}

// Driver entry points (DriverEntry.h).
using WriteValue32 = CUresult (*)(CUstream stream, CUdeviceptr address, cuuint32_t value, unsigned int flags);
using WriteValue64 = CUresult (*)(CUstream stream, CUdeviceptr address, cuuint64_t value, unsigned int flags);
using EventRecord = CUresult (*)(CUevent event, CUstream stream);
using EventQuery = CUresult (*)(CUevent event);

// One use stream: its waiting frees (RaceWaitQueue: the completion rules) and its counter.
struct StreamQueue {
    cudaStream_t stream = nullptr;
    volatile std::uint32_t* reached = nullptr;  // Counters: the last number the stream wrote
    std::uint64_t device = 0;                   // the same word as the GPU addresses it
    RaceWaitQueue waiting;
};

cudaEvent_t asEvent(std::uint64_t handle) { return reinterpret_cast<cudaEvent_t>(handle); }

constexpr std::size_t kMaxCounterStreams = 16;

class RaceEventQueue::State {
public:
    std::vector<cudaEvent_t> free;  // the event pool (PyTorch's EventPool)
    std::vector<StreamQueue> queues;
    WriteValue32 write32 = nullptr;
    WriteValue64 write64 = nullptr;
    unsigned int writeFlags = 0;
    EventRecord eventRecord = nullptr;
    EventQuery eventQuery = nullptr;
    // kMaxCounterStreams 8-byte slots of mapped host memory; a 32-bit counter is a slot's low
    // word, which a 64-bit write fills too (x86-64 is little-endian, numbers stay below 2^32).
    std::uint64_t* counters = nullptr;
    std::uint64_t countersDevice = 0;

    bool setUpDriverEvents() {
        eventRecord = driverEntry<EventRecord>("cuEventRecord");
        eventQuery = driverEntry<EventQuery>("cuEventQuery");
        return eventRecord != nullptr && eventQuery != nullptr;
    }

    // Counters modes: the driver entry point, mapped host memory, and one write that works.
    bool setUpCounters(Mode mode) {
        if (mode == Mode::Counters64) {
            write64 = driverEntry<WriteValue64>("cuStreamWriteValue64");
            if (write64 == nullptr) return false;
        } else {
            write32 = driverEntry<WriteValue32>("cuStreamWriteValue32");
            if (write32 == nullptr) return false;
            writeFlags = mode == Mode::CountersNoBarrier ? CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER : CU_STREAM_WRITE_VALUE_DEFAULT;
        }
        void* host = nullptr;
        if (cudaHostAlloc(&host, kMaxCounterStreams * sizeof(std::uint64_t), cudaHostAllocMapped) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        counters = static_cast<std::uint64_t*>(host);
        for (std::size_t i = 0; i < kMaxCounterStreams; ++i) counters[i] = 0;
        void* device = nullptr;
        if (cudaHostGetDevicePointer(&device, host, 0) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        countersDevice = reinterpret_cast<std::uint64_t>(device);
        // Stream memory operations can be disabled on a platform: try one.
        if (write(nullptr, countersDevice, 0) != CUDA_SUCCESS || cudaDeviceSynchronize() != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return true;
    }

    CUresult write(cudaStream_t stream, std::uint64_t address, std::uint32_t value) const {
        return write64 != nullptr ? write64(stream, address, value, 0) : write32(stream, address, value, writeFlags);
    }

    // True when every piece of work before the event on its stream is done.
    bool ready(cudaEvent_t e) const {
        if (eventQuery != nullptr) {
            const CUresult status = eventQuery(e);
            if (status == CUDA_ERROR_NOT_READY) return false;
            if (status != CUDA_SUCCESS) throw std::runtime_error("cuEventQuery failed: " + std::to_string(status));
            return true;
        }
        const cudaError_t status = cudaEventQuery(e);
        if (status == cudaErrorNotReady) {
            cudaGetLastError();  // as c10 does: "not ready" must not linger as the last error
            return false;
        }
        check(status, "cudaEventQuery");
        return true;
    }

    cudaEvent_t event() {
        if (!free.empty()) {
            cudaEvent_t e = free.back();
            free.pop_back();
            return e;
        }
        cudaEvent_t e = nullptr;
        check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        return e;
    }

    StreamQueue& queue(cudaStream_t stream) {
        for (StreamQueue& q : queues) {
            if (q.stream == stream) return q;
        }
        if (counters != nullptr && queues.size() == kMaxCounterStreams) throw std::runtime_error("race: too many streams");
        StreamQueue& q = queues.emplace_back();
        q.stream = stream;
        if (counters != nullptr) {
            q.reached = reinterpret_cast<volatile std::uint32_t*>(counters + (queues.size() - 1));
            q.device = countersDevice + (queues.size() - 1) * sizeof(std::uint64_t);
        }
        return q;
    }
};

RaceEventQueue::RaceEventQueue(Mode wanted) : state_(std::make_unique<State>()) {
    mode_ = Mode::Events;
    State& s = *state_;
    const bool events = wanted == Mode::DriverEvents || wanted == Mode::DriverEventsTail || wanted == Mode::Mixed;
    const bool counters = wanted != Mode::Events && wanted != Mode::DriverEvents && wanted != Mode::DriverEventsTail;
    const bool eventsOk = !events || s.setUpDriverEvents();
    const bool countersOk = !counters || s.setUpCounters(wanted == Mode::Mixed ? Mode::Counters : wanted);
    if (eventsOk && countersOk) {
        mode_ = wanted;
        return;
    }
    s.eventRecord = nullptr;
    s.eventQuery = nullptr;
    if (s.counters != nullptr) cudaFreeHost(s.counters);
    s.counters = nullptr;
    s.write32 = nullptr;
    s.write64 = nullptr;
}

RaceEventQueue::~RaceEventQueue() {
    clear();
    for (cudaEvent_t e : state_->free) cudaEventDestroy(e);
    if (state_->counters != nullptr) {
        cudaDeviceSynchronize();  // no stream may still write into the words
        cudaFreeHost(state_->counters);
    }
    cudaGetLastError();
}

void RaceEventQueue::record(std::uint64_t stream, std::uint64_t address) {
    const std::uint64_t start = timing_ ? nowNs() : 0;
    State& s = *state_;
    auto* cs = reinterpret_cast<cudaStream_t>(stream);
    StreamQueue& q = s.queue(cs);
    // Mixed: a counter write only when the stream has passed the last one (none in flight).
    if (counting() || (mode_ == Mode::Mixed && q.waiting.counterIdle(*q.reached))) {
        const std::uint32_t number = q.waiting.pushCounter(address);
        if (s.write(cs, q.device, number) != CUDA_SUCCESS) throw std::runtime_error("cuStreamWriteValue failed");
        if (timing_) ++times_.written;
    } else {
        cudaEvent_t e = s.event();
        if (s.eventRecord != nullptr) {
            if (s.eventRecord(e, cs) != CUDA_SUCCESS) throw std::runtime_error("cuEventRecord failed");
        } else {
            check(cudaEventRecord(e, cs), "cudaEventRecord");
        }
        q.waiting.pushEvent(reinterpret_cast<std::uint64_t>(e), address);
        if (timing_) ++times_.recorded;
    }
    ++outstanding_;
    if (timing_) times_.recordNs += nowNs() - start;
}

void RaceEventQueue::poll(Complete complete, void* context) {
    const std::uint64_t start = timing_ ? nowNs() : 0;
    State& s = *state_;
    const bool tail = mode_ == Mode::DriverEventsTail || mode_ == Mode::Mixed;
    auto ready = [&](std::uint64_t event) {
        if (timing_) ++times_.queries;
        return s.ready(asEvent(event));
    };
    auto done = [&](const RaceWaitQueue::Waiting& w) {
        if (w.event != 0) s.free.push_back(asEvent(w.event));
        --outstanding_;
        if (timing_) {
            const std::uint64_t before = nowNs();
            complete(context, w.address);
            times_.completeNs += nowNs() - before;
        } else {
            complete(context, w.address);
        }
    };
    for (StreamQueue& q : s.queues) {
        if (q.waiting.empty()) continue;
        const bool counted = q.reached != nullptr;
        if (timing_ && counted) ++times_.reads;
        q.waiting.poll(counted, counted ? *q.reached : 0, tail, ready, done);
    }
    if (timing_) times_.queryNs += nowNs() - start;  // completeNs is inside: subtract it
}

void RaceEventQueue::clear() {
    for (StreamQueue& q : state_->queues) {
        q.waiting.clear([&](const RaceWaitQueue::Waiting& w) {
            if (w.event != 0) state_->free.push_back(asEvent(w.event));
        });
    }
    outstanding_ = 0;
}

}  // namespace allocscope::gpu
