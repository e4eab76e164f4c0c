#pragma once
// The CUDA driver's virtual-address placement as measured on an NVIDIA H200, driver 580.159.04
// (tests/data/driver-placement: 16 fitting call sequences; 6 held-out ones check it). The rules:
// - Address space is handed out in *chunks* of whole 32 MiB units: a new range of n bytes (n
//   rounded up to 2 MiB) gets a chunk of n rounded up to 32 MiB, and keeps the chunk's tail free.
// - A new cudaMalloc first looks for room inside live chunks (chunks holding any live range),
//   the most recently created chunk first; inside one chunk it takes the smallest free gap that
//   fits (the lowest of equal ones), at the gap's low end.
// - Else its chunk comes from a released range (a chunk whose ranges were all freed goes back,
//   merged with released neighbours) strictly larger than the chunk, the highest such range, at
//   its top; else right below everything handed out so far (the heap grows down).
// - A fresh process's heap (top T) starts with two chunks partly used by the runtime: one at T
//   with a 2 MiB gap at T + 30 MiB, one at T + 96 MiB with a 24 MiB gap at T + 104 MiB; the first
//   new chunk ends 384 MiB below T.
// - cuMemAddressReserve ranges come from their own region, going up from 0x302000000 in
//   chunks of 32 MiB multiples, first fit; their tails take cudaMallocs like any chunk's.
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

namespace allocscope::alloc {

class DriverVaHeap {
public:
    static constexpr std::uint64_t kMiB = 1ull << 20;
    static constexpr std::uint64_t kPage = 2 * kMiB;    // granularity of every range
    static constexpr std::uint64_t kChunk = 32 * kMiB;  // unit of the chunks ranges are carved from
    static constexpr std::uint64_t kReservationBase = 0x302000000ull;

    // A fresh process whose heap top is `top` (32 MiB aligned): the runtime's two chunks at and above it.
    void startFreshProcess(std::uint64_t top);
    // A heap whose new chunks go below `frontier` (a recorded process: its own ranges arrive
    // through insert()).
    void startBelow(std::uint64_t frontier);

    std::uint64_t allocate(std::uint64_t size);  // cudaMalloc
    std::uint64_t reserve(std::uint64_t size);   // cuMemAddressReserve
    // A range placed by someone else (the recorded driver's answer): it joins the chunk that
    // holds its base, or starts a chunk of its own there.
    void insert(std::uint64_t base, std::uint64_t size, bool reservation);
    // Ranges the caller no longer holds go back, ranges it holds that the heap did not place
    // join it (base -> size of what the caller holds now).
    void sync(const std::map<std::uint64_t, std::uint64_t>& live);
    void free(std::uint64_t base);  // cudaFree of a range the caller holds

    // Ranges nobody records (HiddenRangeCalibration infers them from a recording): a range the
    // process's runtime takes by the same rules; it is nobody's to free, so sync() keeps it.
    void allocateHidden(std::uint64_t size);
    // A range the runtime gave back that no chunk covers: it joins the released ranges.
    void addReleasedRange(std::uint64_t base, std::uint64_t size);
    // The runtime lets go of its region below the first runtime chunk (the 384 MiB above a fresh
    // process's first new chunk): the lower runtime chunk then spans it and loses the runtime's
    // range; with none of the caller's ranges in it, it is released. False when there is no such
    // region (not a fresh process, or already released).
    bool releaseRuntimeRegion();
    // Whether the address lies in the runtime's region that releaseRuntimeRegion() would free.
    bool inRuntimeRegion(std::uint64_t address) const;
    // Whether a chunk or a released range covers the address (else it is unknown to the heap).
    bool knows(std::uint64_t address) const;

private:
    struct Chunk {
        std::uint64_t size = 0;
        std::uint64_t order = 0;  // creation order: later chunks are searched first
        bool permanent = false;   // the runtime's own
        bool reservation = false;
        std::map<std::uint64_t, std::uint64_t> ranges;  // live ranges in it: base -> size
    };

    // (chunk base, address) of the gap a new range of `size` takes inside a live chunk.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> fitInChunks(std::uint64_t size) const;
    std::uint64_t newChunk(std::uint64_t size);
    Chunk& addChunk(std::uint64_t base, std::uint64_t size, bool reservation, bool permanent);
    void carveHoles(std::uint64_t base, std::uint64_t size);
    void release(std::uint64_t base);
    void addHole(std::uint64_t base, std::uint64_t size);

    std::map<std::uint64_t, Chunk> chunks_;          // base -> chunk
    std::map<std::uint64_t, std::uint64_t> byOrder_;  // creation order -> chunk base
    std::map<std::uint64_t, std::uint64_t> ranges_;   // live range base -> its chunk's base
    std::map<std::uint64_t, std::uint64_t> holes_;    // released ranges above the frontier: base -> size
    std::uint64_t frontier_ = 0;                      // everything below is free
    std::uint64_t runtimeTop_ = 0;  // a fresh process's top while its runtime region is held; else 0
    std::uint64_t nextOrder_ = 0;
};

}  // namespace allocscope::alloc
