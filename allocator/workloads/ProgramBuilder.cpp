#include "allocator/workloads/ProgramBuilder.h"

#include <algorithm>
#include <utility>

namespace allocscope::alloc {

ProgramBuilder::ProgramBuilder(std::string file) : file_(std::move(file)) {}

std::uint32_t ProgramBuilder::stack(std::string_view function, std::int64_t line) {
    if (function.empty()) return 0;
    return stacks_.intern(Stack{Frame{file_, line, std::string(function)}});
}

std::uint32_t ProgramBuilder::stack(std::string_view inner, std::int64_t innerLine, std::string_view outer,
                                    std::int64_t outerLine) {
    return stacks_.intern(Stack{Frame{file_, innerLine, std::string(inner)}, Frame{file_, outerLine, std::string(outer)}});
}

std::uint64_t ProgramBuilder::alloc(std::uint64_t size, std::uint32_t stackId, StreamId stream) {
    const std::uint64_t id = nextId_++;
    ops_.push_back(Op::alloc(id, size, stream, stackId));
    progress(stream);
    return id;
}

void ProgramBuilder::free(std::uint64_t id) { ops_.push_back(Op::free(id)); }

void ProgramBuilder::recordStream(std::uint64_t id, StreamId stream) {
    ops_.push_back(Op::recordStream(id, stream));
}

void ProgramBuilder::freeWithUses(std::uint64_t id, const std::vector<StreamId>& uses, std::uint32_t lag) {
    ops_.push_back(Op::free(id));
    if (uses.empty()) return;
    if (lag == 0) {
        ops_.push_back(Op::completePending(id));
        return;
    }
    Pending p{id, {}};
    for (StreamId s : uses) p.remaining[s] = lag;
    pending_.push_back(std::move(p));
}

// One more Alloc on `stream`: count it against every pending free waiting on that stream and
// complete those whose every stream has done its share.
void ProgramBuilder::progress(StreamId stream) {
    if (pending_.empty()) return;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
        Pending& p = pending_[i];
        auto it = p.remaining.find(stream);
        if (it != p.remaining.end() && --it->second == 0) p.remaining.erase(it);
        if (p.remaining.empty()) {
            ops_.push_back(Op::completePending(p.id));
        } else {
            if (kept != i) pending_[kept] = std::move(p);
            ++kept;
        }
    }
    pending_.resize(kept);
}

void ProgramBuilder::synchronize() {
    ops_.push_back(Op::simple(OpKind::Synchronize));
    pending_.clear();  // the allocator completed them all
}

void ProgramBuilder::emptyCache() {
    ops_.push_back(Op::simple(OpKind::EmptyCache));
    pending_.clear();
}

void ProgramBuilder::setMemoryFraction(double fraction) { ops_.push_back(Op::setMemoryFraction(fraction)); }
void ProgramBuilder::resetPeakStats() { ops_.push_back(Op::simple(OpKind::ResetPeakStats)); }

void ProgramBuilder::poolOp(OpKind kind, PoolId id, std::uint8_t flags, StreamId stream) {
    ops_.push_back(Op::pool(kind, id, flags, stream));
}

std::uint32_t ProgramBuilder::label(std::string_view name) {
    auto it = labelIds_.find(name);
    if (it != labelIds_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(labels_.size());
    labels_.emplace_back(name);
    labelIds_.emplace(std::string(name), id);
    return id;
}

void ProgramBuilder::begin(std::string_view phase) { ops_.push_back(Op::phase(label(phase), true)); }
void ProgramBuilder::end(std::string_view phase) { ops_.push_back(Op::phase(label(phase), false)); }

GeneratedProgram ProgramBuilder::take() {
    GeneratedProgram out;
    out.program.ops = ops_;
    out.program.labels = std::move(labels_);
    out.stacks = std::move(stacks_);
    ops_ = {};
    labels_ = {};
    stacks_ = StackTable{};
    labelIds_.clear();
    pending_.clear();
    nextId_ = 1;
    return out;
}

void ProgramBuilder::drainOps(std::vector<Op>& out) {
    out.clear();
    out.swap(ops_);
}

}  // namespace allocscope::alloc
