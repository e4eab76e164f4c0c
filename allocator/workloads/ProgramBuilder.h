#pragma once
// Writes a Program op by op for the generators: tensor ids, phase labels, stacks, and the
// pending-free event model documented in Workload.h.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/workloads/Workload.h"

namespace allocscope::alloc {

class ProgramBuilder {
public:
    // `file`: the pretend Python file the stacks name (e.g. "train_gpt.py").
    explicit ProgramBuilder(std::string file);

    // Interns a one-frame stack {file, line, function}; 0 if `function` is empty.
    std::uint32_t stack(std::string_view function, std::int64_t line);
    // Interns a two-frame stack (caller first, as PyTorch lists frames innermost first).
    std::uint32_t stack(std::string_view inner, std::int64_t innerLine, std::string_view outer, std::int64_t outerLine);

    // alloc: returns the new tensor's id (ids count from 1, in allocation order).
    std::uint64_t alloc(std::uint64_t size, std::uint32_t stackId = 0, StreamId stream = kComputeStream);
    void free(std::uint64_t id);
    void recordStream(std::uint64_t id, StreamId stream);
    // Frees a tensor that was record_stream()'d on `uses`: its free completes after `lag` more
    // Alloc ops on each of those streams (Workload.h). lag 0: it completes at once.
    void freeWithUses(std::uint64_t id, const std::vector<StreamId>& uses, std::uint32_t lag);
    void synchronize();
    void emptyCache();
    void setMemoryFraction(double fraction);
    void resetPeakStats();
    // A private-pool op (Op::pool): CreatePool, BeginAllocateToPool (flags kOpCapture /
    // kOpAllStreams, routing `stream`), EndAllocateToPool, ReleasePool.
    void poolOp(OpKind kind, PoolId id, std::uint8_t flags = 0, StreamId stream = kComputeStream);
    void begin(std::string_view phase);
    void end(std::string_view phase);

    std::size_t opCount() const { return ops_.size(); }
    std::size_t pendingFrees() const { return pending_.size(); }
    // The program so far; the builder is left empty.
    GeneratedProgram take();
    // Moves out the ops written so far (streaming generators), keeping labels, stacks and state.
    void drainOps(std::vector<Op>& out);
    const std::vector<std::string>& labels() const { return labels_; }
    const StackTable& stacks() const { return stacks_; }

private:
    struct Pending {
        std::uint64_t id;
        std::map<StreamId, std::uint32_t> remaining;  // allocs still to come on each using stream
    };
    std::uint32_t label(std::string_view name);
    void progress(StreamId stream);

    std::string file_;
    // The ops in a plain vector while they are written: a streaming generator hands them over
    // chunk by chunk without a copy (drainOps); take() copies them into the Program's SpillArray.
    std::vector<Op> ops_;
    std::vector<std::string> labels_;
    StackTable stacks_;
    std::map<std::string, std::uint32_t, std::less<>> labelIds_;
    std::vector<Pending> pending_;
    std::uint64_t nextId_ = 1;
};

}  // namespace allocscope::alloc
