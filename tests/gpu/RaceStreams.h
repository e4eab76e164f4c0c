#pragma once
// The GPU race's two real streams and the event bookkeeping of AllocScope's side of the
// two_stream sequence (tests/gpu/RaceOps.h). CUDA-free header; RaceStreams.cpp needs the toolkit.
//
// Pending frees must complete at the same points in every run and every backend, or c10's and
// AllocScope's layouts would differ by timing alone. So while a pass runs, each stream is held
// by a host function that waits for the host (hold()): an event recorded on it cannot complete.
// release() lets both streams run to the end (every event recorded so far is then complete)
// and hold() holds them again. Between the two, cudaEventQuery answers "not ready" for every
// new event, as it would for a stream busy with kernels.
//
// RaceEventQueue is what PyTorch's insert_events / process_events do for c10 (one FIFO per
// stream, polled before each malloc), for an allocator that is told of completed frees
// (CachingAllocator::completePendingFree). Ways to learn that a use stream has passed a free
// (Mode; every one gives the same answer at every poll, the race's MATCH checks say so):
//  - Events: as c10 does, a pooled cudaEvent recorded at the free, cudaEventQuery at each poll
//    (a runtime call of ~250 ns on the H200 host, per stream with a waiting free, per malloc);
//  - DriverEvents: the same events, recorded and queried through the driver's cuEventRecord /
//    cuEventQuery (entry points fetched through the runtime), without the runtime's per-call
//    wrapping; DriverEventsTail also asks the newest waiting event of a stream once the oldest
//    is ready: events of one stream complete in order, so a ready newest one completes the
//    whole queue with two queries instead of one per event;
//  - Counters: the stream writes a per-stream sequence number into host-mapped memory
//    (cuStreamWriteValue32, ordered after everything before it on the stream, as an event is), and
//    a poll reads that number: a memory read instead of a runtime call. Counters64 writes with
//    cuStreamWriteValue64. CountersNoBarrier asks for CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER (no
//    fence before the write, so not a safe reuse signal): the H200's driver refuses the flag on
//    the v2 entry point and the mode falls back to Events; kept so the race says so.
//  - Mixed: a counter write (~1.1 us) only for a free recorded while no counter write of its
//    stream is in flight, a driver event (~0.25 us) for the others. While a stream is held or
//    busy, its oldest waiting free is then a counter, so the poll before each malloc reads
//    memory and stops there instead of asking the driver; once the stream moves on, the events
//    behind it are asked as in DriverEventsTail, and a later counter the stream has passed
//    completes every free recorded before it without asking. Every mark is still recorded at
//    its free, so each poll gives the answers of the other modes; it only costs fewer writes.
// A mode whose driver entry points or stream memory operations are missing falls back to Events.
// With timing on it adds up the nanoseconds spent recording and polling (the race's breakdown
// pass); off, it reads no clock.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace allocscope::gpu {

class RaceStreams {
public:
    explicit RaceStreams(int device);
    ~RaceStreams();  // releases the streams if held, destroys them; never throws
    RaceStreams(const RaceStreams&) = delete;
    RaceStreams& operator=(const RaceStreams&) = delete;

    // index 0: the legacy default stream (0); 1, 2: the race's streams (cudaStream_t values).
    std::uint64_t handle(int index) const { return handles_[index]; }
    void hold();
    void release();

private:
    std::uint64_t handles_[3] = {0, 0, 0};
    bool held_ = false;
    std::uint64_t generation_ = 0;
};

struct RaceEventTimes {
    std::uint64_t recordNs = 0;
    std::uint64_t queryNs = 0;     // poll() in all, completeNs included
    std::uint64_t completeNs = 0;  // inside poll(): the allocator completing the frees
    std::uint64_t recorded = 0;    // events recorded (cudaEventRecord / cuEventRecord)
    std::uint64_t written = 0;     // counter writes (cuStreamWriteValue32 / 64)
    std::uint64_t queries = 0;     // event queries
    std::uint64_t reads = 0;       // counter reads (one per stream with a waiting free, per poll)
};

class RaceEventQueue {
public:
    using Complete = void (*)(void* context, std::uint64_t address);

    enum class Mode { Events, DriverEvents, DriverEventsTail, Counters, CountersNoBarrier, Counters64, Mixed };
    // Falls back to Events where the mode's driver entry points are missing (mode()).
    explicit RaceEventQueue(Mode wanted);
    ~RaceEventQueue();  // destroys every event and the counters' memory; never throws
    RaceEventQueue(const RaceEventQueue&) = delete;
    RaceEventQueue& operator=(const RaceEventQueue&) = delete;

    // insert_events: an event recorded on `stream` now guards the block at `address`.
    void record(std::uint64_t stream, std::uint64_t address);
    // process_events: per stream, completes blocks in order until an event is not ready.
    void poll(Complete complete, void* context);
    bool idle() const { return outstanding_ == 0; }
    Mode mode() const { return mode_; }
    // Every free is marked by a counter write (the Counters modes; Mixed writes some).
    bool counting() const { return mode_ == Mode::Counters || mode_ == Mode::CountersNoBarrier || mode_ == Mode::Counters64; }
    // Forgets every outstanding event (the allocator completed its frees itself: empty_cache).
    void clear();

    void setTiming(bool on) { timing_ = on; }
    const RaceEventTimes& times() const { return times_; }

    class State;

private:
    std::unique_ptr<State> state_;
    Mode mode_ = Mode::Events;
    std::uint64_t outstanding_ = 0;
    bool timing_ = false;
    RaceEventTimes times_;
};

// What a mode does, for the race's log.
inline const char* describeMode(RaceEventQueue::Mode mode) {
    using Mode = RaceEventQueue::Mode;
    switch (mode) {
    case Mode::Events: return "events (cudaEventRecord / cudaEventQuery, as c10)";
    case Mode::DriverEvents: return "driver events (cuEventRecord / cuEventQuery)";
    case Mode::DriverEventsTail: return "driver events, newest asked once the oldest is ready (cuEventRecord / cuEventQuery)";
    case Mode::Counters: return "stream-written counters (cuStreamWriteValue32)";
    case Mode::CountersNoBarrier: return "stream-written counters without memory barrier (cuStreamWriteValue32, NO_MEMORY_BARRIER)";
    case Mode::Counters64: return "stream-written counters (cuStreamWriteValue64)";
    case Mode::Mixed:
        return "a stream-written counter when none is in flight on the stream, driver events for the other frees "
               "(cuStreamWriteValue32 / cuEventRecord, a read / cuEventQuery)";
    }
    return "?";
}

// The race's two_stream sequences: the same ops, each with its own completion mechanism.
// nullopt: not a two_stream sequence.
inline std::optional<RaceEventQueue::Mode> twoStreamMode(const std::string& sequence) {
    using Mode = RaceEventQueue::Mode;
    if (sequence == "two_stream") return Mode::Mixed;  // the fewest driver calls (README: the race)
    if (sequence == "two_stream_ctr") return Mode::Counters;
    if (sequence == "two_stream_events") return Mode::Events;
    if (sequence == "two_stream_drv") return Mode::DriverEvents;
    if (sequence == "two_stream_drvtail") return Mode::DriverEventsTail;
    if (sequence == "two_stream_nobar") return Mode::CountersNoBarrier;
    if (sequence == "two_stream_w64") return Mode::Counters64;
    return std::nullopt;
}

}  // namespace allocscope::gpu
