#pragma once
// Applies a Program (Op.h) to a CachingAllocator: maps tensor ids to block addresses, stamps
// each op's index on the events it causes, records OOMs and stops at the first invalid op.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "allocator/core/CachingAllocator.h"
#include "allocator/core/Op.h"

namespace allocscope::alloc {

struct ProgramOom {
    std::uint64_t opIndex = 0;
    std::uint64_t tensorId = 0;
    std::string message;  // PyTorch's OutOfMemoryError text
};

struct ProgramError {
    std::uint64_t opIndex = 0;
    std::string message;  // says which op and which id
};

struct ProgramResult {
    std::uint64_t opsRun = 0;  // ops applied (the failing op of an error is not counted)
    std::vector<ProgramOom> ooms;
    std::optional<ProgramError> error;  // the first invalid op; the run stopped there
    bool stoppedAtOom = false;
    bool ok() const { return !error.has_value(); }
};

struct ProgramRunnerOptions {
    bool stopOnOom = false;  // true: stop after the first OOM (like an uncaught OutOfMemoryError)
};

class ProgramRunner {
public:
    explicit ProgramRunner(CachingAllocator& allocator, ProgramRunnerOptions options = {});

    // How many runners this process has built: one per program run, whoever runs it (a
    // comparison, a recording, a lesson). Lets tests check that a verb does not run a config's
    // program twice, without timing anything.
    static std::uint64_t created();

    // Runs every op of `program` from the current state (ids persist across calls).
    ProgramResult run(const Program& program);
    // Applies one op with the given index; returns false (and fills `result`) if the run must
    // stop: an invalid op, or an OOM with stopOnOom.
    bool apply(const Op& op, std::uint64_t opIndex, ProgramResult& result);

    // The block address of a live tensor id.
    std::optional<std::uint64_t> addressOf(std::uint64_t id) const;
    std::size_t liveTensors() const { return live_.size(); }

private:
    bool fail(ProgramResult& result, std::uint64_t opIndex, std::string message);

    CachingAllocator& allocator_;
    ProgramRunnerOptions options_;
    std::unordered_map<std::uint64_t, std::uint64_t> live_;             // id -> address (0 = size-0 tensor)
    std::unordered_map<std::uint64_t, std::uint64_t> pending_;          // freed id -> address, awaiting completion
    std::unordered_map<std::uint64_t, std::uint64_t> pendingByAddress_;  // address -> freed id
    std::unordered_set<std::uint64_t> failed_;                          // ids whose alloc hit an OOM
    // Freed ids whose pending free was completed by a synchronising call before their
    // complete_pending op (their address was reused since): that op is then a no-op.
    std::unordered_set<std::uint64_t> settled_;
};

}  // namespace allocscope::alloc
