#pragma once
// A program operation: what a PyTorch program asks of the allocator. Demo workloads and trace
// replays both produce a Program (a vector of Ops); ProgramRunner applies it to an allocator.
// Ops name tensors by an id chosen by the producer; the runner maps ids to block addresses.
#include <cstdint>
#include <string>
#include <vector>

#include "allocator/core/Event.h"
#include "allocator/core/PoolId.h"
#include "allocator/core/SpillArray.h"

namespace allocscope::alloc {

enum class OpKind : std::uint8_t {
    Alloc,                  // alloc(id, size, stream, stack)
    Free,                   // free(id): free_requested, then free_completed unless stream uses
    RecordStream,           // record_stream(id, stream)
    CompletePending,        // the events guarding id's pending free finished: complete it now
    Synchronize,            // device-wide synchronize: every pending free completes
    EmptyCache,             // torch.cuda.empty_cache()
    SetMemoryFraction,      // set_per_process_memory_fraction(fraction)
    ResetPeakStats,         // reset_peak_memory_stats()
    ResetAccumulatedStats,  // reset_accumulated_memory_stats()
    Phase,                  // phase(label, begin|end): a named region (record_function)
    // Private pools (reference §12). The pool id travels in (id, size) = (first, second).
    CreatePool,           // torch.cuda.MemPool(use_on_oom, no_split) / a graph's pool: one use more
    BeginAllocateToPool,  // route allocations (one stream, or all) to the pool: a capture or use_mem_pool
    EndAllocateToPool,    // stop that routing
    ReleasePool,          // the pool's owner is gone (graph reset, MemPool destroyed): one use less
};

// Op::flags bits.
inline constexpr std::uint8_t kOpAllStreams = 1;  // BeginAllocateToPool: every stream (use_mem_pool)
inline constexpr std::uint8_t kOpCapture = 2;     // BeginAllocateToPool: a CUDA graph capture
inline constexpr std::uint8_t kOpUseOnOom = 4;    // CreatePool: MemPool(use_on_oom=True)
inline constexpr std::uint8_t kOpNoSplit = 8;     // CreatePool: MemPool(no_split=True)

struct Op {
    OpKind kind = OpKind::Alloc;
    bool begin = true;           // Phase: begin (true) or end (false)
    std::uint8_t flags = 0;      // pool ops: kOp* bits (sits in padding: no extra bytes)
    std::uint32_t stackId = 0;   // Alloc: the allocation's stack (StackTable id, 0 = none)
    std::uint32_t labelId = 0;   // Phase: index into Program::labels
    std::uint64_t id = 0;        // tensor id (Alloc, Free, RecordStream, CompletePending)
    std::uint64_t size = 0;      // Alloc: requested bytes (unrounded)
    StreamId stream = 0;         // Alloc: allocation stream; RecordStream: the using stream
    double fraction = 1.0;       // SetMemoryFraction

    static Op alloc(std::uint64_t id, std::uint64_t size, StreamId stream = 0, std::uint32_t stack = 0) {
        Op op;
        op.kind = OpKind::Alloc;
        op.id = id;
        op.size = size;
        op.stream = stream;
        op.stackId = stack;
        return op;
    }
    static Op free(std::uint64_t id) {
        Op op;
        op.kind = OpKind::Free;
        op.id = id;
        return op;
    }
    static Op recordStream(std::uint64_t id, StreamId stream) {
        Op op;
        op.kind = OpKind::RecordStream;
        op.id = id;
        op.stream = stream;
        return op;
    }
    static Op completePending(std::uint64_t id) {
        Op op;
        op.kind = OpKind::CompletePending;
        op.id = id;
        return op;
    }
    static Op simple(OpKind kind) {
        Op op;
        op.kind = kind;
        return op;
    }
    static Op setMemoryFraction(double fraction) {
        Op op;
        op.kind = OpKind::SetMemoryFraction;
        op.fraction = fraction;
        return op;
    }
    static Op pool(OpKind kind, PoolId id, std::uint8_t flags = 0, StreamId stream = 0) {
        Op op;
        op.kind = kind;
        op.id = id.first;
        op.size = id.second;
        op.flags = flags;
        op.stream = stream;
        return op;
    }
    PoolId poolId() const { return PoolId{id, size}; }
    static Op phase(std::uint32_t label, bool begin) {
        Op op;
        op.kind = OpKind::Phase;
        op.labelId = label;
        op.begin = begin;
        return op;
    }
};

// A whole program: its ops (op index = position in `ops`) and the phase labels they name.
// The ops of a big snapshot's program (48 bytes each, ~1.1 per trace entry: 600 MB for a 1 GB
// snapshot) move to a temporary file past SpillArray's threshold, like the trace's entries;
// a reader that goes through them all says where it is with a SpillArray::Walk.
struct Program {
    SpillArray<Op> ops;
    std::vector<std::string> labels;
};

}  // namespace allocscope::alloc
