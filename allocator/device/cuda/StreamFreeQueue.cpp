#include "allocator/device/cuda/StreamFreeQueue.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "allocator/device/PendingFreeMarks.h"
#include "allocator/device/StreamWaitList.h"
#include "allocator/device/cuda/CudaError.h"
#include "allocator/device/cuda/CudaRuntimeCheck.h"

namespace allocscope::alloc {

namespace {

// The caller's current device is PyTorch's business: set ours for a call, then put theirs back.
class StreamFreeDeviceGuard {
public:
    explicit StreamFreeDeviceGuard(int device) {
        throwIfFailed(cudaGetDevice(&previous_), "cudaGetDevice");
        if (previous_ != device) {
            throwIfFailed(cudaSetDevice(device), [&] { return "cudaSetDevice(" + std::to_string(device) + ")"; });
        }
        device_ = device;
    }
    ~StreamFreeDeviceGuard() {
        if (previous_ != device_) cudaSetDevice(previous_);
    }
    StreamFreeDeviceGuard(const StreamFreeDeviceGuard&) = delete;
    StreamFreeDeviceGuard& operator=(const StreamFreeDeviceGuard&) = delete;

private:
    int previous_ = 0;
    int device_ = 0;
};

// A driver entry point (ABI 12.0) through the runtime, or null where the driver lacks it: the
// queue then falls back to a marking that does without (libcuda is never linked).
template <typename Fn>
Fn optionalDriverEntry(const char* symbol) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return reinterpret_cast<Fn>(fn);
}

using WriteValue32Fn = CUresult (*)(CUstream stream, CUdeviceptr address, cuuint32_t value, unsigned int flags);
using EventRecordFn = CUresult (*)(CUevent event, CUstream stream);
using EventQueryFn = CUresult (*)(CUevent event);
using ErrorNameFn = CUresult (*)(CUresult error, const char** name);

// Mapped host memory is taken a page at a time: one 8-byte slot per stream (a 32-bit counter in
// its low word; x86-64 and aarch64 are little-endian).
constexpr std::size_t kCounterSlotsPerChunk = 512;

}  // namespace

// One use stream: its waiting marks and, when counters are used, its word of mapped memory.
struct StreamFreeList {
    cudaStream_t stream = nullptr;
    volatile std::uint32_t* reached = nullptr;  // the last number the stream wrote
    std::uint64_t word = 0;                     // the same word as the GPU addresses it
    StreamWaitList waiting;
};

class StreamFreeQueue::State {
public:
    int device = 0;
    bool counted = false;  // every stream has a counter word (Counters, Mixed)
    bool tail = false;
    bool mixed = false;
    WriteValue32Fn write32 = nullptr;
    EventRecordFn eventRecord = nullptr;  // null: runtime events (cudaEventRecord / cudaEventQuery)
    EventQueryFn eventQuery = nullptr;
    ErrorNameFn errorName = nullptr;
    std::vector<cudaEvent_t> pool;  // c10's EventPool: events given back are used again
    std::vector<StreamFreeList> lists;
    std::size_t lastList = 0;  // the list the previous insert used (frees come in runs)
    std::vector<std::uint64_t*> chunks;
    std::vector<std::uint64_t> chunkWords;  // each chunk's device address
    PendingFreeMarks shared;
    std::vector<std::uint64_t> unmarked;  // inserted without a stream: ready at the next poll

    [[noreturn]] void driverFailed(CUresult status, const char* call) const {
        const char* name = nullptr;
        if (errorName == nullptr || errorName(status, &name) != CUDA_SUCCESS || name == nullptr) name = "CUresult";
        throw CudaError(call, static_cast<int>(status), name, "driver call failed");
    }

    bool setUpDriverEvents() {
        eventRecord = optionalDriverEntry<EventRecordFn>("cuEventRecord");
        eventQuery = optionalDriverEntry<EventQueryFn>("cuEventQuery");
        if (eventRecord != nullptr && eventQuery != nullptr) return true;
        eventRecord = nullptr;
        eventQuery = nullptr;
        return false;
    }

    // Stream memory operations can be missing or disabled on a platform: one write must work.
    bool setUpCounters() {
        write32 = optionalDriverEntry<WriteValue32Fn>("cuStreamWriteValue32");
        if (write32 != nullptr && addChunk() && write32(nullptr, chunkWords[0], 0, CU_STREAM_WRITE_VALUE_DEFAULT) == CUDA_SUCCESS &&
            cudaStreamSynchronize(nullptr) == cudaSuccess) {
            return true;
        }
        cudaGetLastError();
        write32 = nullptr;
        freeChunks();
        return false;
    }

    bool addChunk() {
        void* host = nullptr;
        // Portable: the words stay mapped whichever device the caller has current.
        if (cudaHostAlloc(&host, kCounterSlotsPerChunk * sizeof(std::uint64_t), cudaHostAllocMapped | cudaHostAllocPortable) !=
            cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        auto* words = static_cast<std::uint64_t*>(host);
        for (std::size_t i = 0; i < kCounterSlotsPerChunk; ++i) words[i] = 0;
        void* mapped = nullptr;
        if (cudaHostGetDevicePointer(&mapped, host, 0) != cudaSuccess) {
            cudaGetLastError();
            cudaFreeHost(host);
            return false;
        }
        chunks.push_back(words);
        chunkWords.push_back(reinterpret_cast<std::uint64_t>(mapped));
        return true;
    }

    void freeChunks() {
        for (std::uint64_t* chunk : chunks) cudaFreeHost(chunk);
        chunks.clear();
        chunkWords.clear();
    }

    StreamFreeList& list(cudaStream_t stream) {
        if (lastList < lists.size() && lists[lastList].stream == stream) return lists[lastList];
        for (std::size_t i = 0; i < lists.size(); ++i) {
            if (lists[i].stream == stream) {
                lastList = i;
                return lists[i];
            }
        }
        const std::size_t slot = lists.size();
        if (counted && slot / kCounterSlotsPerChunk >= chunks.size()) {
            StreamFreeDeviceGuard guard(device);
            if (!addChunk()) throw CudaError("cudaHostAlloc of the counter words for a new stream failed");
        }
        StreamFreeList& l = lists.emplace_back();
        l.stream = stream;
        if (counted) {
            l.reached = reinterpret_cast<volatile std::uint32_t*>(chunks[slot / kCounterSlotsPerChunk] + slot % kCounterSlotsPerChunk);
            l.word = chunkWords[slot / kCounterSlotsPerChunk] + (slot % kCounterSlotsPerChunk) * sizeof(std::uint64_t);
        }
        lastList = slot;
        return l;
    }

    cudaEvent_t takeEvent() {
        if (!pool.empty()) {
            cudaEvent_t e = pool.back();
            pool.pop_back();
            return e;
        }
        StreamFreeDeviceGuard guard(device);
        cudaEvent_t e = nullptr;
        throwIfFailed(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags(cudaEventDisableTiming)");
        return e;
    }

    // True when every piece of work before the event on its stream is done.
    bool ready(cudaEvent_t e) const {
        if (eventQuery != nullptr) {
            const CUresult status = eventQuery(e);
            if (status == CUDA_SUCCESS) return true;
            if (status == CUDA_ERROR_NOT_READY) return false;
            driverFailed(status, "cuEventQuery");
        }
        const cudaError_t status = cudaEventQuery(e);
        if (status == cudaSuccess) return true;
        if (status == cudaErrorNotReady) {
            cudaGetLastError();  // as c10 does: "not ready" must not linger as the last error
            return false;
        }
        throwIfFailed(status, "cudaEventQuery");
        return false;
    }

    // A mark of a block's free passed: the block is ready once it was its last mark.
    void passed(const StreamWaitList::Waiting& w, std::vector<std::uint64_t>& ready) {
        if (w.event != 0) pool.push_back(reinterpret_cast<cudaEvent_t>(w.event));
        if (!w.shared || shared.passed(w.address)) ready.push_back(w.address);
    }
};

StreamFreeQueue::StreamFreeQueue(int device) : StreamFreeQueue(device, Marking::Mixed) {}

StreamFreeQueue::StreamFreeQueue(int device, Marking wanted) : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.device = device;
    StreamFreeDeviceGuard guard(device);  // throws where there is no usable device
    s.errorName = optionalDriverEntry<ErrorNameFn>("cuGetErrorName");
    marking_ = chooseMarking(s, wanted);
    s.counted = marking_ == Marking::Counters || marking_ == Marking::Mixed;
    s.mixed = marking_ == Marking::Mixed;
    s.tail = marking_ == Marking::DriverEventsTail || marking_ == Marking::Mixed;
    if (marking_ == Marking::Counters) {
        // Every mark is a counter write: the driver's events are not needed.
        s.eventRecord = nullptr;
        s.eventQuery = nullptr;
    }
}

// The wanted marking, or the next one down whose driver support is there: counters need stream
// memory operations, driver events the driver's entry points; runtime events always work.
StreamFreeQueue::Marking StreamFreeQueue::chooseMarking(State& s, Marking wanted) {
    if (wanted == Marking::Events || !s.setUpDriverEvents()) return Marking::Events;
    if (wanted == Marking::DriverEvents || wanted == Marking::DriverEventsTail) return wanted;
    return s.setUpCounters() ? wanted : Marking::DriverEventsTail;
}

StreamFreeQueue::~StreamFreeQueue() {
    State& s = *state_;
    // A counter write still in flight would land in freed memory: wait for the device first.
    bool writing = false;
    for (const StreamFreeList& l : s.lists) writing = writing || (l.reached != nullptr && *l.reached != l.waiting.issued());
    if (writing) {
        int previous = s.device;
        cudaGetDevice(&previous);
        cudaSetDevice(s.device);
        cudaDeviceSynchronize();
        cudaSetDevice(previous);
    }
    for (StreamFreeList& l : s.lists) {
        l.waiting.clear([&](const StreamWaitList::Waiting& w) {
            if (w.event != 0) s.pool.push_back(reinterpret_cast<cudaEvent_t>(w.event));
        });
    }
    for (cudaEvent_t e : s.pool) cudaEventDestroy(e);
    s.freeChunks();
    cudaGetLastError();  // a runtime already shutting down at exit: nothing left to report
}

void StreamFreeQueue::insert(std::uint64_t address, const std::uint64_t* streams, std::size_t count) {
    State& s = *state_;
    if (count == 0) {
        s.unmarked.push_back(address);
        ++waiting_;
        return;
    }
    const bool shared = count > 1;
    for (std::size_t i = 0; i < count; ++i) {
        auto* stream = reinterpret_cast<cudaStream_t>(streams[i]);
        StreamFreeList& l = s.list(stream);
        // Counters: every mark; Mixed: only when the stream has passed its last counter.
        if (s.counted && (!s.mixed || l.waiting.counterIdle(*l.reached))) {
            const std::uint32_t number = l.waiting.issued() + 1;
            const CUresult status = s.write32(stream, l.word, number, CU_STREAM_WRITE_VALUE_DEFAULT);
            if (status != CUDA_SUCCESS) s.driverFailed(status, "cuStreamWriteValue32");
            l.waiting.pushCounter(address, shared);
            ++counters_.countersWritten;
        } else {
            cudaEvent_t e = s.takeEvent();
            if (s.eventRecord != nullptr) {
                const CUresult status = s.eventRecord(e, stream);
                if (status != CUDA_SUCCESS) {
                    s.pool.push_back(e);
                    s.driverFailed(status, "cuEventRecord");
                }
            } else {
                const cudaError_t status = cudaEventRecord(e, stream);
                if (status != cudaSuccess) s.pool.push_back(e);
                throwIfFailed(status, "cudaEventRecord");
            }
            l.waiting.pushEvent(reinterpret_cast<std::uint64_t>(e), address, shared);
            ++counters_.eventsRecorded;
        }
    }
    if (shared) s.shared.expect(address, static_cast<std::uint32_t>(count));
    ++waiting_;
}

void StreamFreeQueue::collect() {
    State& s = *state_;
    ready_.insert(ready_.end(), s.unmarked.begin(), s.unmarked.end());
    s.unmarked.clear();
    auto ready = [&](std::uint64_t event) {
        ++counters_.eventQueries;
        return s.ready(reinterpret_cast<cudaEvent_t>(event));
    };
    auto done = [&](const StreamWaitList::Waiting& w) { s.passed(w, ready_); };
    for (StreamFreeList& l : s.lists) {
        if (l.waiting.empty()) continue;
        if (s.counted) ++counters_.counterReads;
        l.waiting.poll(s.counted, s.counted ? *l.reached : 0, s.tail, ready, done);
    }
}

void StreamFreeQueue::waitAll() {
    State& s = *state_;
    {
        // Every mark is ordered before the device's end of work, whatever became of its stream
        // since (a counter word cannot be waited on through the runtime).
        StreamFreeDeviceGuard guard(s.device);
        throwIfFailed(cudaDeviceSynchronize(), "cudaDeviceSynchronize (completing the pending frees)");
    }
    ++counters_.drains;
    ready_.insert(ready_.end(), s.unmarked.begin(), s.unmarked.end());
    s.unmarked.clear();
    for (StreamFreeList& l : s.lists) l.waiting.clear([&](const StreamWaitList::Waiting& w) { s.passed(w, ready_); });
    s.shared.clear();
}

const char* StreamFreeQueue::describe(Marking marking) {
    switch (marking) {
    case Marking::Events: return "events (cudaEventRecord / cudaEventQuery, as c10)";
    case Marking::DriverEvents: return "driver events (cuEventRecord / cuEventQuery)";
    case Marking::DriverEventsTail: return "driver events, newest asked once the oldest is ready (cuEventRecord / cuEventQuery)";
    case Marking::Counters: return "stream-written counters (cuStreamWriteValue32)";
    case Marking::Mixed:
        return "a stream-written counter when none is in flight on the stream, driver events for the other frees "
               "(cuStreamWriteValue32 / cuEventRecord, a read / cuEventQuery)";
    }
    return "?";
}

}  // namespace allocscope::alloc
