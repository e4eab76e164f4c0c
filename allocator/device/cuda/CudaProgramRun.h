#pragma once
// Runs a program through the caching allocator on a real GPU with the decisions of a simulated
// run: a SimulatedDevice of the same total memory decides every address (from the simulated
// run's events when given, else by its own placement) and CudaDevice backs each decided segment
// or page range with real memory (translation mode). The events are then compared one by one
// with the simulated run's: a real run must decide exactly as the simulation did, and the
// statistics, layout and memory_summary() reported are the real run's own. Program streams,
// record_stream and pending frees run on real CUDA streams and events (CudaStreamEvents).
//
// CUDA-free header (the CLI includes it); the implementation exists only in CUDA builds.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/core/Event.h"
#include "allocator/core/EventSink.h"
#include "allocator/core/Op.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/core/SegmentInfo.h"
#include "allocator/device/cuda/CudaDevice.h"
#include "allocator/device/cuda/CudaStreamEvents.h"

namespace allocscope::alloc {

struct CudaProgramRunOptions {
    int device = 0;
    bool touch = true;
    AllocatorConfig config;
    std::optional<double> memoryFraction;  // set_per_process_memory_fraction before the first op
    std::uint64_t totalMemory = 0;         // the deciding simulated GPU
    std::uint64_t otherMemory = 0;
    // The simulated run to reproduce: its segment/reservation addresses are handed out in order
    // and its events compared with the real run's. null: the simulator's own placement, no check.
    const std::vector<Event>* simulatedEvents = nullptr;
    int summaryDevice = 0;                 // the device number memory_summary() prints
    EventSink* sink = nullptr;             // also receives the real run's events
};

struct CudaProgramRunResult {
    ProgramResult program;
    DeviceStats stats;
    std::vector<SegmentInfo> segments;
    std::string summary;
    std::string deviceName;           // "CUDA NVIDIA H100 80GB HBM3 (cuda:0), addresses from ..."
    CudaDeviceCounters counters;      // cudaMalloc calls, pages mapped, order disagreements, ...
    CudaStreamEventCounters streamEvents;  // real streams / events behind record_stream
    std::uint64_t newRanges = 0;      // segments + reservations obtained (what order is judged on)
    std::uint64_t oracleMisses = 0;   // requests the simulated run's addresses could not answer
    std::uint64_t events = 0;
    // First difference from the simulated run's events ("" = identical, or nothing to compare).
    std::string eventDifference;
};

class CudaProgramRun {
public:
    // Throws CudaError when the GPU cannot be used or a CUDA call fails unexpectedly.
    static CudaProgramRunResult run(const Program& program, const CudaProgramRunOptions& options);
    // "" when equal on every field that is a decision (action, address, size, block size,
    // stream, segment, pool, cause); else where and how they first differ.
    static std::string firstDifference(const std::vector<Event>& actual, const std::vector<Event>& expected);
};

}  // namespace allocscope::alloc
