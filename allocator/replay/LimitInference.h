#pragma once
// Infers the memory limit a recording ran under from the recording itself (issue 35): a snapshot
// keeps no total memory and no memory fraction, but its first `oom` entry bounds the limit. Every
// recorded success fitted under it, the failed request did not; the replay is deterministic and
// fast, so the limits under which it reproduces the recording up to and including that OOM are
// found by bisection with the real replay (TraceReplayer). The entry's device_free says what
// stopped the allocator: below the request, the device itself was full (the limit is then the
// reserved bytes at the failure + device_free); far above it, a memory fraction (or another cap)
// stopped the allocator first, and the limit is picked inside the interval (a round fraction of
// the total memory device_free implies, if one fits).
#include <cstdint>
#include <optional>
#include <string>

#include "allocator/replay/MemoryLimit.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceReplayer.h"

namespace allocscope::alloc {

// The device a verb would run on without inference: a preset (or the user's choice).
struct LimitDevice {
    std::string name = "h100-80gb";
    std::uint64_t totalMemory = 85'017'493'504ull;
    std::uint64_t otherMemory = 552'402'944ull;  // CUDA context: also what inference assumes
    std::optional<double> memoryFraction;
};

class LimitInference {
public:
    // Limits are searched in steps of this: segments and mapped pages are whole multiples of
    // 2 MiB, so every limit inside one step decides alike.
    static constexpr std::uint64_t kGranule = 2ull << 20;

    // `base`: the replay's options under the recorded config (its device fields are replaced).
    // No oom entry: Source::Preset, `fallback` kept, low = the recorded peak reserved.
    static MemoryLimit infer(const RecordedTrace& trace, const ReplayOptions& base, const LimitDevice& fallback);
    // The limit the user gave (--total-memory / --memory-fraction / --gpu): Source::Explicit.
    static MemoryLimit given(const RecordedTrace& trace, const LimitDevice& device);
    // Sets the options' device fields to the limit's device.
    static void apply(const MemoryLimit& limit, ReplayOptions& options);
    // The largest reserved bytes the recording's segment events reach (before its first oom
    // entry when it has one): a lower bound on any limit it ran under.
    static std::uint64_t recordedPeakReserved(const RecordedTrace& trace);
    // PyTorch's segment size for a request of `rounded` bytes outside expandable segments
    // (get_allocation_size, reference §4.1): what device_free is compared with.
    static std::uint64_t allocationSize(std::uint64_t rounded);
};

}  // namespace allocscope::alloc
