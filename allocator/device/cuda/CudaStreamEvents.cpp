#include "allocator/device/cuda/CudaStreamEvents.h"

#include <cuda_runtime_api.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "allocator/device/cuda/CudaRuntimeCheck.h"

namespace allocscope::alloc {

class CudaStreamEvents::State {
public:
    int device = 0;
    bool touch = true;
    AddressLookup realAddress;
    std::map<std::uint64_t, std::pair<std::uint64_t, StreamId>> tensors;  // live id -> (size, alloc stream)
    std::map<StreamId, cudaStream_t> streams;            // program stream id (not 0) -> real stream
    std::map<std::uint64_t, std::set<StreamId>> uses;    // live tensor id -> its use streams
    std::map<std::uint64_t, std::vector<cudaEvent_t>> pending;  // freed tensor id -> its events
    CudaStreamEventCounters counters;

    cudaStream_t stream(StreamId id) {
        if (id == 0) return nullptr;  // the legacy default stream
        auto it = streams.find(id);
        if (it != streams.end()) return it->second;
        cudaStream_t created = nullptr;
        throwIfFailed(cudaStreamCreate(&created), [&] { return "cudaStreamCreate (program stream " + std::to_string(id) + ")"; });
        ++counters.streams;
        return streams.emplace(id, created).first->second;
    }

    void destroy(std::vector<cudaEvent_t>& events) {
        for (cudaEvent_t event : events) cudaEventDestroy(event);
        events.clear();
    }

    // Every event of `id`'s pending free must have completed before the allocator reuses it.
    void complete(std::uint64_t id) {
        auto it = pending.find(id);
        if (it == pending.end()) return;
        for (cudaEvent_t event : it->second) {
            const cudaError_t status = cudaEventQuery(event);
            if (status == cudaSuccess) {
                ++counters.eventsDone;
                continue;
            }
            if (status != cudaErrorNotReady) throwIfFailed(status, "cudaEventQuery (pending free)");
            throwIfFailed(cudaEventSynchronize(event), "cudaEventSynchronize (pending free)");
            ++counters.eventsWaited;
        }
        destroy(it->second);
        pending.erase(it);
    }

    void synchronizeAll() {
        throwIfFailed(cudaDeviceSynchronize(), "cudaDeviceSynchronize (synchronize / empty_cache)");
        ++counters.syncs;
        for (auto& [id, events] : pending) {
            counters.eventsDone += events.size();
            destroy(events);
        }
        pending.clear();
    }
};

CudaStreamEvents::CudaStreamEvents(int device, bool touch, AddressLookup realAddress) : state_(std::make_unique<State>()) {
    state_->device = device;
    state_->touch = touch;
    state_->realAddress = std::move(realAddress);
    throwIfFailed(cudaSetDevice(device), [&] { return "cudaSetDevice(" + std::to_string(device) + ")"; });
}

CudaStreamEvents::~CudaStreamEvents() {
    State& s = *state_;
    cudaSetDevice(s.device);
    cudaDeviceSynchronize();
    for (auto& [id, events] : s.pending) s.destroy(events);
    for (auto& [id, stream] : s.streams) cudaStreamDestroy(stream);
    cudaGetLastError();
}

void CudaStreamEvents::before(const Op& op) {
    State& s = *state_;
    switch (op.kind) {
    case OpKind::Free: {
        auto it = s.uses.find(op.id);
        if (it == s.uses.end()) break;
        // insert_events: one event per use stream, recorded now, guards the block's reuse.
        std::vector<cudaEvent_t>& events = s.pending[op.id];
        for (StreamId use : it->second) {
            cudaEvent_t event = nullptr;
            throwIfFailed(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate (pending free)");
            events.push_back(event);
            throwIfFailed(cudaEventRecord(event, s.stream(use)), [&] { return "cudaEventRecord on program stream " + std::to_string(use); });
            ++s.counters.eventsRecorded;
        }
        s.uses.erase(it);
        s.tensors.erase(op.id);
        break;
    }
    case OpKind::CompletePending: s.complete(op.id); break;
    case OpKind::Synchronize:
    case OpKind::EmptyCache: s.synchronizeAll(); break;
    default: break;
    }
}

void CudaStreamEvents::after(const Op& op) {
    State& s = *state_;
    switch (op.kind) {
    case OpKind::Alloc:
        s.uses.erase(op.id);
        s.tensors[op.id] = {op.size, op.stream};
        if (op.stream != 0) s.stream(op.stream);
        break;
    case OpKind::Free:
        s.tensors.erase(op.id);
        break;
    case OpKind::RecordStream: {
        auto tensor = s.tensors.find(op.id);
        if (tensor == s.tensors.end() || tensor->second.second == op.stream) break;  // PyTorch ignores its own stream
        const std::optional<std::uint64_t> real = s.realAddress(op.id);
        if (!real) break;
        if (s.touch) {
            // A real use of the tensor on that stream, which the free's events will then guard.
            throwIfFailed(cudaMemsetAsync(reinterpret_cast<void*>(*real), 0, tensor->second.first, s.stream(op.stream)),
                          [&] { return "cudaMemsetAsync of a tensor on program stream " + std::to_string(op.stream) + " (record_stream)"; });
            ++s.counters.uses;
        }
        s.uses[op.id].insert(op.stream);
        break;
    }
    default: break;
    }
}

const CudaStreamEventCounters& CudaStreamEvents::counters() const { return state_->counters; }

}  // namespace allocscope::alloc
