#pragma once
// Pending frees of blocks used on other streams (record_stream), completed by asking the
// streams, as c10 does: PyTorch's insert_events / process_events /
// synchronize_and_free_events (reference: pytorch-allocator-2.11.md, record_stream). The free
// of a block used on streams S1..Sn is marked on each Si where it happens; the block may be
// handed out again once every Si has passed its mark. The allocator is told through done().
//
// How a mark is made and asked (Marking; every one completes the same frees at every poll):
//  - Events: as c10, a pooled cudaEvent recorded at the free, cudaEventQuery at each poll.
//  - DriverEvents: the same events through the driver's cuEventRecord / cuEventQuery (entry
//    points fetched through the runtime, no libcuda link), without the runtime's wrapping;
//    DriverEventsTail also asks a stream's newest waiting event once its oldest is ready: a
//    stream's events complete in order, so a ready newest one completes the whole list.
//  - Counters: the stream writes a per-stream sequence number into host-mapped memory
//    (cuStreamWriteValue32 with its default memory barrier: ordered after all prior work on the
//    stream, as an event is); a poll reads that number instead of calling the driver.
//  - Mixed (the default): a counter write only for a free marked while no counter write of its
//    stream is in flight, a driver event for the others; the tail rule as above. While a
//    stream is busy its oldest mark is then a counter and the poll before each malloc reads a
//    word and stops. The fastest safe marking measured (tests/benchmarks/README.md, the GPU
//    race). A write without the memory barrier is not a safe reuse signal and is not offered.
// A marking whose driver entry points or stream memory operations are missing falls back to
// DriverEventsTail, then to Events (marking() says which one runs).
//
// Streams passed in are the caller's (PyTorch's): never created or destroyed here; the events
// and the mapped memory are the queue's own. Not thread-safe (c10 holds its allocator mutex).
// CUDA-free header; StreamFreeQueue.cpp needs the toolkit (built when ALLOCSCOPE_WITH_CUDA).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace allocscope::alloc {

// What the queue asked of the driver (its own cost, for benchmarks and tests).
struct StreamFreeCounters {
    std::uint64_t eventsRecorded = 0;  // cudaEventRecord / cuEventRecord
    std::uint64_t countersWritten = 0;  // cuStreamWriteValue32
    std::uint64_t eventQueries = 0;    // cudaEventQuery / cuEventQuery
    std::uint64_t counterReads = 0;    // one per stream with a waiting counter-capable list, per poll
    std::uint64_t drains = 0;          // drain() calls that waited for the device
};

class StreamFreeQueue {
public:
    enum class Marking { Events, DriverEvents, DriverEventsTail, Counters, Mixed };

    // Throws CudaError when the device cannot be used (no driver, no GPU, bad index).
    explicit StreamFreeQueue(int device);
    StreamFreeQueue(int device, Marking wanted);
    ~StreamFreeQueue();  // waits for the device if counter writes may be in flight; never throws
    StreamFreeQueue(const StreamFreeQueue&) = delete;
    StreamFreeQueue& operator=(const StreamFreeQueue&) = delete;

    // The free of the block at `address`, used on these streams (cudaStream_t values): one mark
    // per stream (c10's insert_events). No stream at all: it completes at the next poll.
    void insert(std::uint64_t address, const std::uint64_t* streams, std::size_t count);

    // c10's process_events, before each malloc: done(address) once for each free whose marks
    // have all passed, oldest first per stream. done must not throw (c10's free_block does not).
    template <class Done>
    void poll(Done&& done) {
        if (waiting_ == 0) return;  // the common case: one load and a branch
        collect();
        finish(done);
    }
    // c10's synchronize_and_free_events: waits for every mark and completes every free.
    template <class Done>
    void drain(Done&& done) {
        if (waiting_ == 0) return;
        waitAll();
        finish(done);
    }
    bool empty() const { return waiting_ == 0; }
    // Frees that wait (blocks, not marks).
    std::size_t size() const { return waiting_; }

    Marking marking() const { return marking_; }
    const StreamFreeCounters& counters() const { return counters_; }
    // What a marking does, in words (for logs).
    static const char* describe(Marking marking);

    class State;

private:
    void collect();  // moves the frees whose last mark passed into ready_
    void waitAll();  // waits for the device and moves every waiting free into ready_
    static Marking chooseMarking(State& s, Marking wanted);
    template <class Done>
    void finish(Done& done) {
        waiting_ -= ready_.size();
        for (std::uint64_t address : ready_) done(address);
        ready_.clear();
    }

    std::unique_ptr<State> state_;
    std::vector<std::uint64_t> ready_;
    std::size_t waiting_ = 0;
    Marking marking_ = Marking::Events;
    StreamFreeCounters counters_;
};

}  // namespace allocscope::alloc
