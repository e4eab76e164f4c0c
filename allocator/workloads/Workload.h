#pragma once
// A demo workload: a deterministic, parameterised generator of a Program (allocator/core/Op.h).
// Same parameters + seed -> the same ops, byte for byte, on every machine: generators use their
// own Rng (never std::*_distribution, whose results differ between standard libraries).
//
// Streams. StreamId 0 is the default (compute) stream; other ids are arbitrary non-zero values
// standing for cudaStream_t handles (kCopyStream, kSideStream...).
//
// Pending frees (the event model shared by every generator, implemented by ProgramBuilder):
// a tensor that was record_stream()'d on other streams is freed with Op::free (PyTorch records
// an event on each using stream; the block stays "active_pending_free"). Its free completes —
// an Op::completePending is emitted — right after the k-th Alloc op issued on *each* of those
// streams after the free (k = the lag given to ProgramBuilder::freeWithUses; the work queued on
// the using stream before the event is modelled as the next k allocations there). A Synchronize
// or EmptyCache op completes every pending free (PyTorch synchronises all events there), so no
// CompletePending is emitted for them afterwards.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "allocator/core/Op.h"
#include "allocator/core/StackTable.h"
#include "allocator/workloads/ProgramSource.h"
#include "allocator/workloads/WorkloadParams.h"

namespace allocscope::alloc {

inline constexpr StreamId kComputeStream = 0;
inline constexpr StreamId kCopyStream = 0x7a01;
inline constexpr StreamId kSideStream = 0x7a02;

// A whole generated program with the stacks its Alloc ops name (Op::stackId).
struct GeneratedProgram {
    Program program;
    StackTable stacks;
};

class Workload {
public:
    virtual ~Workload() = default;
    virtual std::string name() const = 0;         // "fragmentation-101"
    virtual std::string summary() const = 0;      // one line
    virtual std::string description() const = 0;  // a paragraph a student can read
    virtual std::vector<ParamSpec> params() const = 0;
    virtual std::string defaultGpu() const { return "h100-80gb"; }  // a GpuPresets name
    virtual bool usesSeed() const = 0;            // does the seed change the program?
    virtual GeneratedProgram generate(const WorkloadParams& params, std::uint64_t seed) const = 0;
    // Streams the program; the default generates it whole and hands it out in chunks.
    virtual std::unique_ptr<ProgramSource> open(const WorkloadParams& params, std::uint64_t seed) const;

    // Defaults + "k=v" overrides, checked against params().
    WorkloadParams resolve(const std::vector<std::pair<std::string, std::string>>& overrides = {}) const {
        return WorkloadParams::resolve(params(), overrides);
    }
};

}  // namespace allocscope::alloc
