#include "storage/session/PhaseTracker.h"

namespace allocscope::storage {

void PhaseTracker::close(const Open& open, int depth, std::uint64_t eventsBefore, std::uint64_t opIndex) {
    // A phase without events has nothing to shade or step to.
    if (eventsBefore <= open.eventsBefore) return;
    out_(PhaseSpan{open.name, open.eventsBefore, eventsBefore - 1, depth, open.opIndex, opIndex});
}

void PhaseTracker::markOp(const alloc::Program& program, const alloc::Op& op, std::uint64_t opIndex, std::uint64_t eventsBefore) {
    if (op.kind != alloc::OpKind::Phase) return;
    static const std::string unnamed = "(unnamed phase)";
    mark(op.labelId < program.labels.size() ? program.labels[op.labelId] : unnamed, op.begin, opIndex, eventsBefore);
}

void PhaseTracker::mark(const std::string& name, bool begin, std::uint64_t opIndex, std::uint64_t eventsBefore) {
    if (begin) {
        open_.push_back(Open{name, eventsBefore, opIndex});
        return;
    }
    for (std::size_t i = open_.size(); i-- > 0;) {
        if (open_[i].name != name) continue;
        close(open_[i], static_cast<int>(i), eventsBefore, opIndex);
        open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
        return;
    }
}

void PhaseTracker::finish(std::uint64_t eventCount, std::uint64_t lastOp) {
    for (std::size_t i = open_.size(); i-- > 0;) close(open_[i], static_cast<int>(i), eventCount, lastOp);
    open_.clear();
}

}  // namespace allocscope::storage
