#include "allocator/replay/ReplayRun.h"

#include <sstream>

namespace allocscope::alloc {

// Collects the events of the step being run; the replayer decides whether to keep the step.
class ReplayRun::Capture final : public EventSink {
public:
    void onEvent(const Event& event) override {
        events.push_back(event);
        ++count;
    }
    std::vector<Event> events;
    std::uint64_t count = 0;
};

namespace {
std::string hex(std::uint64_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}
}  // namespace

ReplayRun::ReplayRun(const RecordedTrace& trace, const std::vector<TraceStep>& steps, const ReplayOptions& options)
    : trace_(trace), steps_(steps), options_(options), capture_(std::make_unique<Capture>()) {
    device_ = std::make_unique<SimulatedDevice>(options.totalMemory, options.otherMemory);
    device_->setAddressOracle([this](const PlacementRequest& request) { return oracle(request); });
    allocator_ = std::make_unique<CachingAllocator>(options.config, *device_, capture_.get());
    if (options.memoryFraction) allocator_->setMemoryFraction(*options.memoryFraction);
    capture_->events.clear();
}

ReplayRun::~ReplayRun() = default;

std::optional<std::uint64_t> ReplayRun::oracle(const PlacementRequest& request) {
    const std::map<std::uint64_t, std::uint64_t>& live = device_->liveRanges();
    if (options_.placement) return options_.placement->place(request, live, step_);
    std::optional<std::uint64_t> address = recordedAddress(request, live);
    if (!address && options_.fallbackPlacement) address = options_.fallbackPlacement->place(request, live, step_);
    return address;
}

std::optional<std::uint64_t> ReplayRun::recordedAddress(const PlacementRequest& request,
                                                        const std::map<std::uint64_t, std::uint64_t>& live) {
    if (step_ >= steps_.size()) return std::nullopt;
    const TraceStep& step = steps_[step_];
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    if (!trace_.hasSegmentEvents) {
        // A fresh segment's (or reservation's) first block is carved from its start.
        if (step.program != kNoEntry && trace_.entries[step.program].action == EventAction::Alloc) {
            const std::uint64_t address = trace_.entries[step.program].address;
            if (!overlapsLive(live, address, request.size)) return address;
        }
        return std::nullopt;
    }
    for (std::size_t i = step.begin; i < last; ++i) {
        const RecordedEntry& e = trace_.entries[i];
        if (request.kind == PlacementRequest::Kind::Segment) {
            if (e.action != EventAction::SegmentAlloc || e.size != request.size) continue;
            const std::size_t slot = i - step.begin;
            if (segmentAllocUsed_[slot] || overlapsLive(live, e.address, e.size)) continue;
            segmentAllocUsed_[slot] = true;
            return e.address;
        }
        // The first map of a new reservation is at its base.
        if (e.action == EventAction::SegmentMap && !overlapsLive(live, e.address, 1)) return e.address;
    }
    return std::nullopt;
}

std::uint64_t ReplayRun::push(const Op& op) {
    program_.ops.push_back(op);
    const std::uint64_t index = program_.ops.size() - 1;
    allocator_->setOpIndex(index);
    return index;
}

void ReplayRun::emitPhases(std::size_t upToEntry) {
    while (nextPhase_ < trace_.phases.size() && trace_.phases[nextPhase_].entryIndex <= upToEntry) {
        const PhaseMark& mark = trace_.phases[nextPhase_++];
        std::uint32_t label = 0;
        while (label < program_.labels.size() && program_.labels[label] != mark.name) ++label;
        if (label == program_.labels.size()) program_.labels.push_back(mark.name);
        push(Op::phase(label, mark.begin));
    }
}

void ReplayRun::finish() { emitPhases(kNoEntry - 1); }

StepOutcome ReplayRun::runStep(std::size_t k, bool withEmptyCache) {
    StepOutcome out;
    const TraceStep& step = steps_[k];
    step_ = k;
    segmentAllocUsed_.assign(step.end - step.begin, false);
    emitPhases(step.program == kNoEntry ? step.end : step.program);
    capture_->events.clear();
    if (withEmptyCache) {
        out.programOp = push(Op::simple(OpKind::EmptyCache));
        allocator_->emptyCache();
    }
    if (step.program != kNoEntry) {
        const RecordedEntry& e = trace_.entries[step.program];
        const std::uint64_t id = step.program;  // a tensor is named by its alloc's entry index
        switch (e.action) {
            case EventAction::Alloc: {
                out.programOp = push(Op::alloc(id, e.size, e.stream, e.stackId));
                const std::optional<std::uint64_t> address = allocator_->malloc(e.size, e.stream, e.stackId);
                if (address) {
                    liveByRecorded_[e.address] = id;
                    replayAddress_[id] = *address;
                    out.allocAddress = address;
                } else {
                    out.unexpectedOom = true;
                    out.oomMessage = allocator_->lastOom().message;
                    liveByRecorded_.erase(e.address);
                }
                break;
            }
            case EventAction::Oom: {
                out.programOp = push(Op::alloc(id, e.size, e.stream, e.stackId));
                const std::optional<std::uint64_t> address = allocator_->malloc(e.size, e.stream, e.stackId);
                if (address) {
                    // The program raised here in the recording and never held this tensor: drop
                    // it again so the rest of the program runs as recorded.
                    out.oomVanished = true;
                    push(Op::free(id));
                    allocator_->free(*address);
                }
                break;
            }
            case EventAction::FreeRequested: {
                auto it = liveByRecorded_.find(e.address);
                if (it == liveByRecorded_.end()) {
                    out.notes.push_back("trace entry " + std::to_string(step.program) + ": free of " + hex(e.address) +
                                        ", which the replay does not hold (allocated before recording started, "
                                        "or its allocation failed)");
                    break;
                }
                const std::uint64_t tensor = it->second;
                const std::uint64_t address = replayAddress_.at(tensor);
                liveByRecorded_.erase(it);
                if (step.pendingFree) {
                    push(Op::recordStream(tensor, kReplaySideStream));
                    allocator_->recordStream(address, kReplaySideStream);
                }
                out.programOp = push(Op::free(tensor));
                allocator_->free(address);
                if (step.pendingFree) {
                    pendingByRecorded_[e.address] = tensor;
                } else {
                    replayAddress_.erase(tensor);
                }
                break;
            }
            case EventAction::FreeCompleted: {
                auto it = pendingByRecorded_.find(e.address);
                if (it == pendingByRecorded_.end()) {
                    out.notes.push_back("trace entry " + std::to_string(step.program) + ": free_completed of " +
                                        hex(e.address) + " without a pending free");
                    break;
                }
                const std::uint64_t tensor = it->second;
                out.programOp = push(Op::completePending(tensor));
                allocator_->completePendingFree(replayAddress_.at(tensor));
                replayAddress_.erase(tensor);
                pendingByRecorded_.erase(it);
                break;
            }
            default:
                break;
        }
    }
    eventCount_ += capture_->events.size();
    out.events = std::move(capture_->events);
    capture_->events.clear();
    return out;
}

}  // namespace allocscope::alloc
