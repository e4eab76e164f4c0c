#include "tests/gpu/RaceStreams.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <stdexcept>
#include <string>

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

}  // namespace allocscope::gpu
