#pragma once
// Turns a program's phase marks (Op::phase begin/end, in op order) into the event ranges the
// session stores (PhaseSpan). A mark is placed between events: `eventsBefore` = how many events
// of the run happened before the op that carries it, so a phase covers the events of the ops
// between its begin and end marks. Ends close the innermost open phase of the same name
// (record_function regions nest); an end without a begin is ignored.
//
// Each phase goes to `out` as it closes (a big snapshot has hundreds of thousands of regions:
// they are stored as they close rather than held to the end of the run). Only the open ones,
// at most as many as the marks nest, are kept.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "allocator/core/Op.h"
#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

class PhaseTracker {
public:
    // `out` receives every phase that saw at least one event, in the order the phases close.
    explicit PhaseTracker(std::function<void(PhaseSpan&&)> out) : out_(std::move(out)) {}

    void mark(const std::string& name, bool begin, std::uint64_t opIndex, std::uint64_t eventsBefore);
    // The mark an Op::phase of `program` carries (its label by id; "(unnamed phase)" for an id
    // the program does not name). Any other op kind is ignored.
    void markOp(const alloc::Program& program, const alloc::Op& op, std::uint64_t opIndex, std::uint64_t eventsBefore);
    // Closes the phases still open at the end of the run (`eventCount` events, last op `lastOp`),
    // innermost first.
    void finish(std::uint64_t eventCount, std::uint64_t lastOp);

private:
    struct Open {
        std::string name;
        std::uint64_t eventsBefore = 0;
        std::uint64_t opIndex = 0;
    };
    void close(const Open& open, int depth, std::uint64_t eventsBefore, std::uint64_t opIndex);

    std::function<void(PhaseSpan&&)> out_;
    std::vector<Open> open_;
};

}  // namespace allocscope::storage
