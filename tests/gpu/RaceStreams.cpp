#include "tests/gpu/RaceStreams.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

class RaceEventQueue::State {
public:
    std::vector<cudaEvent_t> free;  // the event pool (PyTorch's EventPool)
    std::vector<std::pair<cudaStream_t, std::deque<std::pair<cudaEvent_t, std::uint64_t>>>> queues;

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

    std::deque<std::pair<cudaEvent_t, std::uint64_t>>& queue(cudaStream_t stream) {
        for (auto& [s, q] : queues) {
            if (s == stream) return q;
        }
        return queues.emplace_back(stream, std::deque<std::pair<cudaEvent_t, std::uint64_t>>{}).second;
    }
};

RaceEventQueue::RaceEventQueue() : state_(std::make_unique<State>()) {}

RaceEventQueue::~RaceEventQueue() {
    clear();
    for (cudaEvent_t e : state_->free) cudaEventDestroy(e);
    cudaGetLastError();
}

void RaceEventQueue::record(std::uint64_t stream, std::uint64_t address) {
    const std::uint64_t start = timing_ ? nowNs() : 0;
    auto* s = reinterpret_cast<cudaStream_t>(stream);
    cudaEvent_t e = state_->event();
    check(cudaEventRecord(e, s), "cudaEventRecord");
    state_->queue(s).emplace_back(e, address);
    ++outstanding_;
    if (timing_) {
        times_.recordNs += nowNs() - start;
        ++times_.recorded;
    }
}

void RaceEventQueue::poll(Complete complete, void* context) {
    const std::uint64_t start = timing_ ? nowNs() : 0;
    for (auto& [stream, queue] : state_->queues) {
        while (!queue.empty()) {
            const cudaError_t status = cudaEventQuery(queue.front().first);
            if (timing_) ++times_.queries;
            if (status == cudaErrorNotReady) {
                cudaGetLastError();  // as c10 does: "not ready" must not linger as the last error
                break;
            }
            check(status, "cudaEventQuery");
            state_->free.push_back(queue.front().first);
            const std::uint64_t address = queue.front().second;
            queue.pop_front();
            --outstanding_;
            if (timing_) {
                const std::uint64_t before = nowNs();
                complete(context, address);
                times_.completeNs += nowNs() - before;
            } else {
                complete(context, address);
            }
        }
    }
    if (timing_) times_.queryNs += nowNs() - start;  // completeNs is inside: subtract it
}

void RaceEventQueue::clear() {
    for (auto& [stream, queue] : state_->queues) {
        for (auto& [e, address] : queue) state_->free.push_back(e);
        queue.clear();
    }
    outstanding_ = 0;
}

}  // namespace allocscope::gpu
