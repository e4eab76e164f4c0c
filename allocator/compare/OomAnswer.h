#pragma once
// The answer to "why did my run run out of memory, and would another setting have avoided it?"
// for a recorded OOM: what failed and where, the limit it hit, the memory at the failure and who
// held it, PyTorch's own message, and a what-if over the configs `recommend` tries, each run at
// the inferred limit and at the ends of its interval. Built by OomAnalyzer; printed by
// `allocscope-cli oom` (text or JSON) and drawn by the app's OOM view. Plain data, no Qt.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/replay/MemoryLimit.h"

namespace allocscope::alloc {

// A live block at the failure: memory the program held when the request failed.
struct OomHolder {
    std::uint64_t address = 0;
    std::uint64_t size = 0;       // block bytes
    std::uint64_t requested = 0;  // the tensor's requested bytes
    StreamId stream = 0;
    std::uint64_t segment = 0;    // its segment's address
    std::vector<std::string> frames;  // its call stack, innermost first ("file:line:function")
};

// One config of the what-if, run at the chosen limit and at the interval's ends.
struct OomWhatIfRow {
    std::string config;        // as `recommend` labels it ("default", "expandable_segments:True")
    bool recorded = false;     // the recording's own config
    bool oom = false;          // at the chosen limit
    std::optional<std::uint64_t> oomOp;  // its first OOM's op index
    std::uint64_t peakReserved = 0;
    std::int64_t headroom = 0;           // limit - peak reserved (negative: it needed more)
    // Over [limit.low, limit.high]: the same verdict everywhere, or a threshold inside.
    bool oomAtLow = false;
    bool oomAtHigh = false;
    bool holdsOverInterval() const { return oomAtLow == oomAtHigh; }
    // When it depends: the smallest limit in the interval without an OOM ("OOMs below X").
    std::optional<std::uint64_t> threshold;
    std::string verdict;  // "no OOM at any limit in the interval", "OOMs below 6.10 GiB", ...
};

struct OomAnswer {
    // First line: the seed question's answer ("expandable_segments:True would have avoided
    // this OOM (peak 6.01 GiB of 6.29 GiB)", "no config tried avoids it: the program needs ...").
    std::string headline;

    // The failure.
    std::size_t entryIndex = 0;  // the oom trace entry
    std::uint64_t opIndex = 0;   // its program op
    std::int64_t device = 0;
    StreamId stream = 0;
    std::uint64_t requested = 0;  // bytes requested (PyTorch's rounded size, as its trace keeps it)
    std::uint64_t allocSize = 0;  // the segment that could not be obtained ("Tried to allocate")
    std::uint64_t deviceFree = 0;  // what the driver reported free at the failure

    MemoryLimit limit;

    // The allocator at the failure (after its release of cached blocks and retry).
    std::uint64_t reserved = 0;
    std::uint64_t allocated = 0;
    std::uint64_t cachedFree = 0;     // reserved but not allocated
    std::uint64_t largestFree = 0;    // the largest free block
    // Free cached memory would have served the request had it been one block (fragmentation),
    // rather than the limit being really reached.
    bool fragmented = false;

    std::vector<OomHolder> holders;   // the largest live blocks first (at most a few dozen)
    std::size_t holderCount = 0;      // all live blocks at the failure
    std::string pytorchMessage;       // torch.OutOfMemoryError's text, as PyTorch printed it
    std::vector<OomWhatIfRow> whatIf;  // grid order; the recorded config first
};

}  // namespace allocscope::alloc
