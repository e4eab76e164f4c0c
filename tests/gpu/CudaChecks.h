#pragma once
// Behaviour checks of the CUDA backend on a real GPU, written once and run two ways: by the Qt
// test TestCudaDevice (which shows them as Skipped on machines without a GPU: CI) and by the
// headless tests/benchmarks/bench_gpu_checks (the GPU machine has no Qt). Each check returns ""
// on success or what went wrong; CUDA errors arrive as CudaError exceptions and fail the check.
//
// Compiled only with ALLOCSCOPE_HAVE_CUDA (the callers guard the include).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/CachingAllocator.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/device/SimulatedDevice.h"
#include "allocator/device/cuda/CudaAsyncBackend.h"
#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaError.h"
#include "allocator/device/cuda/CudaProgramRun.h"

namespace allocscope::gpu::checks {

using namespace allocscope::alloc;

inline constexpr std::uint64_t kMB = 1ull << 20;

// A second (pretend) stream id: the allocator keeps separate pools per stream.
inline StreamId round2Stream() { return 7; }

// A small program with every kind of block: small and large pools, splits, an oversize-ish
// request, frees in the middle (so best fit and merging matter), a second stream and an
// empty_cache() in the middle.
inline Program mixedProgram() {
    Program program;
    std::uint64_t id = 1;
    const std::uint64_t sizes[] = {512, 3000, 700 * 1024, 1 * kMB + 1, 3 * kMB, 12 * kMB, 25 * kMB, 60 * kMB};
    for (int round = 0; round < 4; ++round) {
        for (std::uint64_t size : sizes) program.ops.push_back(Op::alloc(id++, size + static_cast<std::uint64_t>(round) * 4096));
    }
    for (std::uint64_t victim = 1; victim < id; victim += 2) program.ops.push_back(Op::free(victim));
    for (std::uint64_t size : sizes) program.ops.push_back(Op::alloc(id++, size / 2 + 512, round2Stream()));
    program.ops.push_back(Op::simple(OpKind::EmptyCache));
    for (std::uint64_t size : sizes) program.ops.push_back(Op::alloc(id++, size * 2));
    for (std::uint64_t victim = 2; victim < id; victim += 4) program.ops.push_back(Op::free(victim));  // even: still live
    return program;
}

inline std::string describe(const Event& e) {
    return std::string(actionName(e.action)) + " addr " + std::to_string(e.address) + " size " + std::to_string(e.size) +
           " seg " + std::to_string(e.segment) + " op " + std::to_string(e.opIndex);
}

inline std::string sameEvents(const std::vector<Event>& a, const std::vector<Event>& b) {
    if (a.size() != b.size()) return "event count " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        const Event& x = a[i];
        const Event& y = b[i];
        if (x.action != y.action || x.address != y.address || x.size != y.size || x.roundedSize != y.roundedSize ||
            x.segment != y.segment || x.stream != y.stream || x.opIndex != y.opIndex || x.cause != y.cause) {
            return "event " + std::to_string(i) + ": " + describe(x) + " vs " + describe(y);
        }
    }
    return "";
}

inline std::string segmentRoundTrip() {
    CudaDevice device(CudaDeviceOptions{0, true, nullptr});
    const auto address = device.allocateSegment(2 * kMB, 0);
    if (!address) return "a 2 MiB cudaMalloc reported out of memory";
    if (device.realAddress(*address) != address) return "direct mode must hand out the real pointer";
    if (device.realAddress(*address + 2 * kMB - 1) != *address + 2 * kMB - 1) return "translation inside the segment";
    if (device.realAddress(*address + 2 * kMB).has_value()) return "an address past the segment translated";
    if (device.counters().cudaMallocCalls != 1 || device.counters().heldBytes != 2 * kMB) return "counters after cudaMalloc";
    device.freeSegment(*address, 2 * kMB);
    if (device.counters().cudaFreeCalls != 1 || device.counters().heldBytes != 0) return "counters after cudaFree";
    if (device.totalMemory() == 0 || device.freeMemory() == 0 || device.freeMemory() > device.totalMemory()) {
        return "total/free memory out of range";
    }
    return "";
}

inline std::string misuseThrows() {
    CudaDevice device;
    const auto address = device.allocateSegment(4 * kMB, 0);
    if (!address) return "4 MiB cudaMalloc failed";
    auto throws = [](const std::function<void()>& call) {
        try {
            call();
        } catch (const CudaError&) {
            return true;
        }
        return false;
    };
    if (!throws([&] { device.freeSegment(*address + 512, 4 * kMB); })) return "freeing an address inside a segment did not throw";
    if (!throws([&] { device.freeSegment(*address, 2 * kMB); })) return "freeing with the wrong size did not throw";
    device.freeSegment(*address, 4 * kMB);
    if (!throws([&] { device.freeSegment(*address, 4 * kMB); })) return "a double free did not throw";
    if (device.granularity() == 0) return "";  // no VMM: nothing more to misuse
    const std::uint64_t page = device.granularity();
    const auto base = device.reserveAddressRange(8 * page, page, 0);
    if (!base) return "reserving 8 pages failed";
    if (!throws([&] { device.mapPages(*base + 512, page); })) return "mapping at an unaligned address did not throw";
    if (!throws([&] { device.mapPages(*base, page + 512); })) return "mapping a partial page did not throw";
    if (!throws([&] { device.mapPages(*base + 7 * page, 2 * page); })) return "mapping past the reservation did not throw";
    if (!throws([&] { device.reserveAddressRange(8 * page, page + 512, 0); })) return "a page size off the granularity did not throw";
    if (!device.mapPages(*base, 2 * page)) return "mapping 2 pages failed";
    if (!throws([&] { device.mapPages(*base + page, page); })) return "mapping an already-mapped page did not throw";
    if (!throws([&] { device.releaseAddressRange(*base, 8 * page); })) return "releasing with mapped pages did not throw";
    if (device.counters().heldBytes != 0) return "the refused release must still give the pages back";
    return "";
}

inline std::string outOfMemoryIsNotAnError() {
    CudaDevice device;
    const auto huge = device.allocateSegment(device.totalMemory() * 4, 0);
    if (huge.has_value()) return "cudaMalloc of 4x the device memory succeeded";
    const auto after = device.allocateSegment(2 * kMB, 0);  // the OOM must not be sticky
    if (!after) return "a small cudaMalloc after an OOM failed";
    device.freeSegment(*after, 2 * kMB);
    return "";
}

inline std::string expandablePages() {
    CudaDevice device(CudaDeviceOptions{0, true, nullptr});
    if (device.granularity() == 0) return "this GPU/driver lacks the virtual-memory API";
    const std::uint64_t page = 20 * kMB;  // the large pool's page: a multiple of 2 MiB
    if (page % device.granularity() != 0) return "granularity " + std::to_string(device.granularity()) + " does not divide 20 MiB";
    const std::uint64_t size = 64 * page;
    const auto base = device.reserveAddressRange(size, page, 0);
    if (!base) return "reserving 64 pages failed";
    if (!device.mapPages(*base, 3 * page)) return "mapping 3 pages failed";
    if (!device.mapPages(*base + 10 * page, page)) return "mapping a page further on failed";
    if (device.counters().pagesMapped != 4 || device.counters().heldBytes != 4 * page) return "counters after mapping";
    device.unmapPages(*base + page, page);  // a hole in the middle of a mapped run
    device.unmapPages(*base, page);
    device.unmapPages(*base + 2 * page, page);
    device.unmapPages(*base + 10 * page, page);
    if (device.counters().pagesUnmapped != 4 || device.counters().heldBytes != 0) return "counters after unmapping";
    device.releaseAddressRange(*base, size);
    if (device.counters().reservationsFreed != 1) return "the reservation was not freed";
    return "";
}

// The allocator on CudaDevice in translation mode decides exactly as on the simulated device
// alone (same events, addresses, statistics, layout), while every block has real memory.
inline std::string translationEqualsSimulation(bool expandable) {
    const std::uint64_t total = 80ull << 30;
    const std::uint64_t other = 512 * kMB;
    AllocatorConfig config;
    config.expandableSegments = expandable;
    const Program program = mixedProgram();

    SimulatedDevice alone(total, other);
    VectorSink aloneEvents;
    CachingAllocator reference(config, alone, &aloneEvents);
    ProgramRunner(reference).run(program);

    SimulatedDevice decider(total, other);
    CudaDevice device(CudaDeviceOptions{0, true, &decider});
    VectorSink events;
    CachingAllocator allocator(config, device, &events);
    ProgramRunner runner(allocator);
    const ProgramResult result = runner.run(program);
    if (!result.ok()) return "program failed: " + result.error->message;
    if (const std::string diff = sameEvents(events.events, aloneEvents.events); !diff.empty()) return "events differ: " + diff;
    if (!(allocator.stats() == reference.stats())) return "statistics differ";
    const auto segments = allocator.segments();
    if (segments.size() != reference.segments().size()) return "segment count differs";
    for (const SegmentInfo& segment : segments) {
        for (const BlockInfo& block : segment.blocks) {
            const auto real = device.realAddress(block.address);
            if (!real) return "block " + std::to_string(block.address) + " has no real memory behind it";
            if (*real == block.address) return "translation returned the simulated address itself";
        }
    }
    if (device.counters().realOomDivergences != 0) return "the GPU ran out of memory where the simulation did not";
    if (device.orderDisagreements() > device.counters().cudaMallocCalls + device.counters().reservations) {
        return "more order disagreements than segments";
    }
    allocator.synchronize();
    allocator.emptyCache();
    for (std::uint64_t id = 1; id < 200; ++id) {
        if (auto address = runner.addressOf(id)) allocator.free(*address);
    }
    allocator.emptyCache();
    if (allocator.stats().reserved_bytes[kAggregate].current != 0) return "memory still reserved after freeing all";
    if (device.counters().heldBytes != 0) return "the device still holds " + std::to_string(device.counters().heldBytes) + " bytes";
    return "";
}

// Direct mode: the allocator on real pointers runs the program; every live block is inside
// real memory, and freeing everything + empty_cache returns it all to the driver.
inline std::string allocatorOnRealPointers(bool expandable) {
    AllocatorConfig config;
    config.expandableSegments = expandable;
    CudaDevice device(CudaDeviceOptions{0, true, nullptr});
    CountingSink sink;
    CachingAllocator allocator(config, device, &sink);
    ProgramRunner runner(allocator);
    const Program program = mixedProgram();
    const ProgramResult result = runner.run(program);
    if (!result.ok()) return "program failed: " + result.error->message;
    if (!result.ooms.empty()) return "unexpected OOM: " + result.ooms.front().message;
    for (const SegmentInfo& segment : allocator.segments()) {
        if (!device.realAddress(segment.address)) return "a segment the allocator reports is not live on the device";
    }
    const auto& stats = allocator.stats();
    if (static_cast<std::uint64_t>(stats.reserved_bytes[kAggregate].current) != device.counters().heldBytes) {
        return "reserved_bytes " + std::to_string(stats.reserved_bytes[kAggregate].current) + " != device held " +
               std::to_string(device.counters().heldBytes);
    }
    for (std::uint64_t id = 1; id < 200; ++id) {
        if (auto address = runner.addressOf(id)) allocator.free(*address);
    }
    allocator.emptyCache();
    if (device.counters().heldBytes != 0) return "the device still holds memory after empty_cache";
    if (sink.total() == 0) return "no events";
    return "";
}

inline std::string asyncBackendStats() {
    CudaAsyncBackend backend(0);
    Program program;
    program.ops.push_back(Op::alloc(1, 1 * kMB));
    program.ops.push_back(Op::alloc(2, 5 * kMB));
    CudaAsyncRunResult run = backend.run(program, true);
    if (run.allocs != 2 || run.ooms != 0) return "two allocations expected";
    DeviceStats stats = backend.stats();
    const auto& used = stats.allocated_bytes[kAggregate];
    const auto& reserved = stats.reserved_bytes[kAggregate];
    if (used.current < static_cast<std::int64_t>(6 * kMB)) return "used memory below the 6 MiB allocated: " + std::to_string(used.current);
    if (reserved.current < used.current) return "reserved below used";
    if (!(stats.active_bytes[kAggregate] == used)) return "active_bytes must mirror allocated_bytes";
    if (stats.max_split_size != 0 || stats.allocation[kAggregate].current != 0) return "keys the async backend leaves 0";
    // The two allocations stay live: the destructor must give them back (memcheck's leak check
    // sees it when run under compute-sanitizer).
    return "";
}

inline std::string asyncBackendLifecycle() {
    CudaAsyncBackend backend(0);
    Program program;
    program.ops.push_back(Op::alloc(1, 1 * kMB));
    program.ops.push_back(Op::alloc(2, 5 * kMB));
    program.ops.push_back(Op::free(1));
    program.ops.push_back(Op::free(2));
    program.ops.push_back(Op::free(9));  // unknown id: counted, not fatal
    program.ops.push_back(Op::setMemoryFraction(0.0001));
    program.ops.push_back(Op::alloc(3, 1ull << 30));  // over the fraction limit: an OOM
    const CudaAsyncRunResult run = backend.run(program);
    if (run.allocs != 2 || run.frees != 2 || run.unknownFrees != 1 || run.ooms != 1) {
        return "run counts: allocs " + std::to_string(run.allocs) + " frees " + std::to_string(run.frees) + " unknown " +
               std::to_string(run.unknownFrees) + " ooms " + std::to_string(run.ooms);
    }
    DeviceStats stats = backend.stats();
    if (stats.allocated_bytes[kAggregate].current != 0) return "used memory after freeing everything";
    if (stats.allocated_bytes[kAggregate].peak < static_cast<std::int64_t>(6 * kMB)) return "peak below 6 MiB";
    backend.emptyCache();
    stats = backend.stats();
    if (stats.reserved_bytes[kAggregate].current != 0) {
        return "reserved after empty_cache: " + std::to_string(stats.reserved_bytes[kAggregate].current);
    }
    backend.resetPeakStats();
    stats = backend.stats();
    if (stats.allocated_bytes[kAggregate].peak != 0) return "peak after reset_peak_memory_stats";
    return "";
}

// record_stream and pending frees on real streams and events (CudaProgramRun): a block used on a
// second stream is freed (one event recorded on that stream), the allocator keeps it pending
// until complete_pending (the event must have completed by then: waited for if not), so the
// next request of that size gets a new block first and the freed one only afterwards. The
// decisions must equal the simulated run's.
inline std::string streamEventsGuardPendingFrees() {
    Program program;
    program.ops.push_back(Op::alloc(1, 8 * kMB));
    program.ops.push_back(Op::recordStream(1, round2Stream()));
    program.ops.push_back(Op::free(1));               // pending: one event on stream 7
    program.ops.push_back(Op::alloc(2, 8 * kMB));     // cannot take block 1 yet
    program.ops.push_back(Op::completePending(1));
    program.ops.push_back(Op::alloc(3, 8 * kMB));     // block 1, now free
    program.ops.push_back(Op::alloc(4, 4 * kMB, round2Stream()));
    program.ops.push_back(Op::recordStream(4, 0));
    program.ops.push_back(Op::free(4));
    program.ops.push_back(Op::simple(OpKind::Synchronize));  // completes it (and its event)
    program.ops.push_back(Op::free(2));
    program.ops.push_back(Op::free(3));

    SimulatedDevice simulated(85'017'493'504ull, 552'402'944ull);
    VectorSink simulatedEvents;
    {
        CachingAllocator allocator(AllocatorConfig{}, simulated, &simulatedEvents);
        const ProgramResult r = ProgramRunner(allocator).run(program);
        if (!r.ok()) return "simulated run failed: " + r.error->message;
    }
    CudaProgramRunOptions options;
    options.totalMemory = 85'017'493'504ull;
    options.otherMemory = 552'402'944ull;
    options.simulatedEvents = &simulatedEvents.events;
    const CudaProgramRunResult gpu = CudaProgramRun::run(program, options);
    if (!gpu.program.ok()) return "GPU run failed: " + gpu.program.error->message;
    if (!gpu.eventDifference.empty()) return "GPU run decided differently: " + gpu.eventDifference;
    const CudaStreamEventCounters& c = gpu.streamEvents;
    if (c.streams != 1) return "expected 1 real stream, got " + std::to_string(c.streams);
    if (c.eventsRecorded != 2) return "expected 2 events recorded at frees, got " + std::to_string(c.eventsRecorded);
    if (c.eventsDone + c.eventsWaited != 2) return "not every event was seen complete";
    if (c.uses != 2) return "expected 2 record_stream uses written, got " + std::to_string(c.uses);
    if (gpu.stats.allocated_bytes[kAggregate].current != 0) return "memory still allocated at the end";
    return "";
}

struct Check {
    const char* name;
    std::function<std::string()> run;
};

inline std::vector<Check> all() {
    return {
        {"segmentRoundTrip", segmentRoundTrip},
        {"misuseThrows", misuseThrows},
        {"outOfMemoryIsNotAnError", outOfMemoryIsNotAnError},
        {"expandablePages", expandablePages},
        {"translationEqualsSimulation", [] { return translationEqualsSimulation(false); }},
        {"translationEqualsSimulationExpandable", [] { return translationEqualsSimulation(true); }},
        {"allocatorOnRealPointers", [] { return allocatorOnRealPointers(false); }},
        {"allocatorOnRealPointersExpandable", [] { return allocatorOnRealPointers(true); }},
        {"asyncBackendStats", asyncBackendStats},
        {"asyncBackendLifecycle", asyncBackendLifecycle},
        {"streamEventsGuardPendingFrees", streamEventsGuardPendingFrees},
    };
}

// Runs one check, turning exceptions into failures.
inline std::string run(const Check& check) {
    try {
        return check.run();
    } catch (const std::exception& error) {
        return std::string("exception: ") + error.what();
    }
}

}  // namespace allocscope::gpu::checks
