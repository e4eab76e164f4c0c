#pragma once
// The memory limit a replay runs under: the bytes PyTorch's allocator could reserve on the device
// before a request failed. Two things impose one in PyTorch 2.11 (reference §4.2, malloc's OOM
// path): a memory fraction (allowed_memory_maximum = fraction x total memory; alloc_block fails
// when reserved + the new segment would exceed it), or the device itself (cudaMalloc fails when
// the segment exceeds what the driver has free: total memory - what the CUDA context and other
// processes hold). A recording rarely says which numbers it ran under; LimitInference bounds the
// limit by replaying it, and this value says what was chosen, between what, and from what.
#include <cstdint>
#include <optional>
#include <string>

namespace allocscope::alloc {

struct MemoryLimit {
    enum class Source : std::uint8_t {
        Preset,    // nothing to infer from (no OOM recorded): the chosen GPU preset, as before
        Explicit,  // --total-memory / --memory-fraction / --gpu (or the app's own choice) given
        Inferred,  // inferred from the recorded OOM
        Unreproduced,  // the recording has an OOM but no limit makes the replay reproduce it
    };
    enum class Cause : std::uint8_t {
        MemoryFraction,  // a fraction stopped the allocator (device_free far above the request)
        DeviceFull,      // the device had no room left (device_free below the request)
    };

    Source source = Source::Preset;
    Cause cause = Cause::DeviceFull;
    // The limit the replay runs under, in bytes PyTorch could reserve.
    std::uint64_t bytes = 0;
    // Inferred: every limit in [low, high] (both included) replays the recording exactly; `bytes`
    // lies in it. Preset / Explicit: low = the recording's peak reserved (a lower bound on the
    // real limit), high = bytes.
    std::uint64_t low = 0;
    std::uint64_t high = 0;
    // The recorded OOM the limit was inferred from (Inferred, Unreproduced).
    std::optional<std::uint64_t> oomOp;   // its program op index in the replay
    std::optional<std::size_t> oomEntry;  // its trace entry index
    std::uint64_t deviceFree = 0;         // the oom entry's device_free (cudaMemGetInfo)
    std::uint64_t requested = 0;          // the oom entry's size (rounded request)
    std::uint64_t peakReserved = 0;       // the recording's peak reserved before the OOM
    // How `bytes` was picked inside [low, high], in words ("device_free + reserved at the
    // failure", "fraction 0.045 of the h200-141gb's 150,754,820,096 B").
    std::string pick;

    // The simulated device that realises `bytes`: a fraction of `totalMemory`, or a device whose
    // `otherMemory` leaves exactly `bytes` for the allocator.
    std::string deviceName;
    std::uint64_t totalMemory = 0;
    std::uint64_t otherMemory = 0;
    std::optional<double> memoryFraction;

    bool inferred() const { return source == Source::Inferred; }
    // More than one limit reproduces the recording: an answer may depend on where in it.
    bool isInterval() const { return inferred() && low != high; }

    // The same device with the limit moved to `limit` (same cause, same total memory).
    MemoryLimit at(std::uint64_t limit) const;
    // One line for every verb and view: "limit inferred from the OOM at op 1234: 6.29 GiB (a
    // memory fraction), between 6.27 GiB and 6.30 GiB", "limit: h100-80gb as given (...)",
    // "no OOM recorded: the limit is at least 1.20 GiB (the recorded peak reserved); the GPU stays h100-80gb".
    std::string describe() const;
};

}  // namespace allocscope::alloc
