// What each way of marking "the stream got here" costs the host per call, and what each way of
// asking costs per poll: the two halves of learning that a use stream passed a free (the race's
// two_stream, allocator/device/cuda/StreamFreeQueue.h). Standalone (the CUDA runtime only; driver
// entry points are fetched through it (CudaDriverEntry.h), libcuda is never linked):
//
//   g++ -O2 -std=c++20 -I. -I$CUDA_HOME/include tests/gpu/completion_probe.cpp -L$CUDA_HOME/lib64 -lcudart -o probe
//   ./probe [calls]
//
// Each mark is issued in windows of 32 on a stream held by a host function (as in the race: the
// stream cannot run past the window, so nothing completes while the host issues), then the
// stream is released and synchronised (not timed). "running" issues the same windows on a stream
// that is not held.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "allocator/device/cuda/CudaDriverEntry.h"

namespace {

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
        std::exit(1);
    }
}

using WriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using BatchMemOp = CUresult (*)(CUstream, unsigned int, CUstreamBatchMemOpParams*, unsigned int);
using EventRecord = CUresult (*)(CUevent, CUstream);
using EventQuery = CUresult (*)(CUevent);
using MemsetD32Async = CUresult (*)(CUdeviceptr, unsigned int, size_t, CUstream);
using StreamQuery = CUresult (*)(CUstream);

std::atomic<std::uint64_t> gOpened{0};
void CUDART_CB waitForGate(void* generation) {
    const auto wanted = reinterpret_cast<std::uintptr_t>(generation);
    for (std::uint64_t seen = gOpened.load(); seen < wanted; seen = gOpened.load()) gOpened.wait(seen);
}
std::atomic<std::uint64_t> gHostCalls{0};
void CUDART_CB countHostCall(void*) { gHostCalls.fetch_add(1, std::memory_order_relaxed); }

std::uint64_t nowNs() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Every hold takes a new generation from one process-wide count, so that a later gate's hold is
// never one that gOpened already passed.
std::uint64_t gGenerations = 0;

struct Gate {
    cudaStream_t stream;
    std::uint64_t generation = 0;
    void hold() {
        generation = ++gGenerations;
        check(cudaLaunchHostFunc(stream, waitForGate, reinterpret_cast<void*>(static_cast<std::uintptr_t>(generation))),
              "cudaLaunchHostFunc");
    }
    void release() {
        gOpened.store(generation);
        gOpened.notify_all();
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }
};

// ns per call of `mark`, issued in windows of 32, the stream held (or not) during each window.
double timeMarks(cudaStream_t stream, bool held, int calls, const std::function<void(int)>& mark) {
    Gate gate{stream};
    constexpr int kWindow = 32;
    std::uint64_t spent = 0;
    for (int done = 0; done < calls; done += kWindow) {
        if (held) gate.hold();
        const std::uint64_t start = nowNs();
        for (int i = 0; i < kWindow; ++i) mark(done + i);
        spent += nowNs() - start;
        if (held) {
            gate.release();
        } else {
            check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        }
    }
    return static_cast<double>(spent) / calls;
}

}  // namespace

int main(int argc, char** argv) {
    const int calls = argc > 1 ? std::atoi(argv[1]) : 64000;
    check(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    int driver = 0;
    cudaDriverGetVersion(&driver);
    std::printf("device %s, driver API %d, %d calls per figure, windows of 32\n", prop.name, driver, calls);
    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");

    auto write32 = allocscope::alloc::optionalDriverEntry<WriteValue32>("cuStreamWriteValue32");
    auto batch = allocscope::alloc::optionalDriverEntry<BatchMemOp>("cuStreamBatchMemOp");
    auto eventRecord = allocscope::alloc::optionalDriverEntry<EventRecord>("cuEventRecord");
    auto eventQuery = allocscope::alloc::optionalDriverEntry<EventQuery>("cuEventQuery");
    auto memset32 = allocscope::alloc::optionalDriverEntry<MemsetD32Async>("cuMemsetD32Async");
    auto streamQuery = allocscope::alloc::optionalDriverEntry<StreamQuery>("cuStreamQuery");

    void* mapped = nullptr;
    check(cudaHostAlloc(&mapped, 4096, cudaHostAllocMapped), "cudaHostAlloc");
    std::memset(mapped, 0, 4096);
    void* mappedDevice = nullptr;
    check(cudaHostGetDevicePointer(&mappedDevice, mapped, 0), "cudaHostGetDevicePointer");
    void* registered = std::aligned_alloc(4096, 4096);
    std::memset(registered, 0, 4096);
    check(cudaHostRegister(registered, 4096, cudaHostRegisterMapped), "cudaHostRegister");
    void* registeredDevice = nullptr;
    check(cudaHostGetDevicePointer(&registeredDevice, registered, 0), "cudaHostGetDevicePointer");
    void* deviceWord = nullptr;
    check(cudaMalloc(&deviceWord, 4096), "cudaMalloc");
    const auto mappedAddr = reinterpret_cast<CUdeviceptr>(mappedDevice);
    const auto mappedHostAddr = reinterpret_cast<CUdeviceptr>(mapped);
    const auto registeredAddr = reinterpret_cast<CUdeviceptr>(registeredDevice);
    const auto deviceAddr = reinterpret_cast<CUdeviceptr>(deviceWord);

    std::vector<cudaEvent_t> events(64);
    for (cudaEvent_t& e : events) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");

    auto failIf = [](bool bad, const char* what) {
        if (bad) {
            std::fprintf(stderr, "%s failed\n", what);
            std::exit(1);
        }
    };
    struct Mark {
        const char* name;
        std::function<void(int)> fn;
    };
    std::vector<Mark> marks;
    marks.push_back({"cudaEventRecord", [&](int i) { check(cudaEventRecord(events[i % 64], stream), "cudaEventRecord"); }});
    if (eventRecord != nullptr) {
        marks.push_back({"cuEventRecord", [&](int i) {
                             failIf(eventRecord(events[i % 64], stream) != CUDA_SUCCESS, "cuEventRecord");
                         }});
    }
    if (write32 != nullptr) {
        marks.push_back({"cuStreamWriteValue32 -> cudaHostAlloc'd (device pointer)", [&](int i) {
                             failIf(write32(stream, mappedAddr, i, 0) != CUDA_SUCCESS, "write32");
                         }});
        marks.push_back({"cuStreamWriteValue32 -> cudaHostAlloc'd (host pointer, UVA)", [&](int i) {
                             failIf(write32(stream, mappedHostAddr, i, 0) != CUDA_SUCCESS, "write32 host");
                         }});
        marks.push_back({"cuStreamWriteValue32 -> cudaHostRegister'd", [&](int i) {
                             failIf(write32(stream, registeredAddr, i, 0) != CUDA_SUCCESS, "write32 registered");
                         }});
        marks.push_back({"cuStreamWriteValue32 -> device memory", [&](int i) {
                             failIf(write32(stream, deviceAddr, i, 0) != CUDA_SUCCESS, "write32 device");
                         }});
    }
    if (batch != nullptr) {
        marks.push_back({"cuStreamBatchMemOp (1 write) -> cudaHostAlloc'd", [&](int i) {
                             CUstreamBatchMemOpParams op{};
                             op.writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
                             op.writeValue.address = mappedAddr;
                             op.writeValue.value = static_cast<cuuint32_t>(i);
                             op.writeValue.flags = 0;
                             failIf(batch(stream, 1, &op, 0) != CUDA_SUCCESS, "batch");
                         }});
    }
    if (memset32 != nullptr) {
        marks.push_back({"cuMemsetD32Async (1 word) -> cudaHostAlloc'd", [&](int i) {
                             failIf(memset32(mappedAddr, static_cast<unsigned>(i), 1, stream) != CUDA_SUCCESS, "memset");
                         }});
    }
    marks.push_back({"cudaLaunchHostFunc (a counter)", [&](int) {
                         check(cudaLaunchHostFunc(stream, countHostCall, nullptr), "cudaLaunchHostFunc");
                     }});

    std::printf("%-62s %10s %10s\n", "mark", "held ns", "running ns");
    for (const Mark& m : marks) {
        timeMarks(stream, true, 3200, m.fn);  // warm
        const double held = timeMarks(stream, true, calls, m.fn);
        const double running = timeMarks(stream, false, calls, m.fn);
        std::printf("%-62s %10.1f %10.1f\n", m.name, held, running);
    }

    // Polls: an event that is not ready (the stream held), one that is, the stream itself.
    Gate gate{stream};
    auto timePoll = [&](const char* name, const std::function<bool()>& poll, bool held) {
        if (held) gate.hold();
        cudaEvent_t e = events[0];
        check(cudaEventRecord(e, stream), "cudaEventRecord");
        if (!held) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        int answers = 0;
        const std::uint64_t start = nowNs();
        for (int i = 0; i < calls; ++i) answers += poll() ? 1 : 0;
        const double ns = static_cast<double>(nowNs() - start) / calls;
        if (held) gate.release();
        std::printf("%-62s %10.1f  (%s: %d of %d ready)\n", name, ns, held ? "held" : "idle", answers, calls);
    };
    for (bool held : {true, false}) {
        timePoll("cudaEventQuery", [&] {
            const cudaError_t s = cudaEventQuery(events[0]);
            if (s == cudaErrorNotReady) cudaGetLastError();
            return s == cudaSuccess;
        }, held);
        if (eventQuery != nullptr) timePoll("cuEventQuery", [&] { return eventQuery(events[0]) == CUDA_SUCCESS; }, held);
        if (streamQuery != nullptr) timePoll("cuStreamQuery", [&] { return streamQuery(stream) == CUDA_SUCCESS; }, held);
        timePoll("read of the mapped word", [&] { return *static_cast<volatile std::uint32_t*>(mapped) != 0xffffffffu; }, held);
    }
    std::printf("host functions run: %llu\n", static_cast<unsigned long long>(gHostCalls.load()));
    return 0;
}
