#pragma once
// A program handed out chunk by chunk (Workload::open), for programs too large to hold at once.
#include <string>
#include <vector>

#include "allocator/core/Op.h"
#include "allocator/core/StackTable.h"

namespace allocscope::alloc {

// A program delivered in chunks (random-mix at 10^7 ops must not be held in memory at once).
// labels() and stacks() are complete before the first chunk.
class ProgramSource {
public:
    virtual ~ProgramSource() = default;
    virtual const std::vector<std::string>& labels() const = 0;
    virtual const StackTable& stacks() const = 0;
    // Appends the next ops to `out` (cleared first); false when the program has ended.
    virtual bool nextChunk(std::vector<Op>& out) = 0;
};

}  // namespace allocscope::alloc
