#include "allocator/replay/TraceReplayer.h"

#include <set>
#include <sstream>

#include "allocator/replay/ReplayRun.h"
#include "allocator/replay/TraceSteps.h"

namespace allocscope::alloc {
namespace {

std::string describe(EventAction action, std::uint64_t address, std::uint64_t size) {
    std::ostringstream s;
    s << actionName(action) << " 0x" << std::hex << address << std::dec << " (" << size << " B)";
    return s.str();
}

struct Expected {
    const RecordedTrace* trace = nullptr;
    std::vector<TraceStep> steps;
};

// What differs between the replayed step and the expected recording's step k ("" = nothing).
std::string compareStep(const Expected& expected, std::size_t k, const RecordedEntry* program, const StepOutcome& out) {
    if (out.unexpectedOom) return "the allocation failed (out of memory) where the recording succeeded";
    if (!expected.trace) return "";
    if (k >= expected.steps.size()) return "the expected recording has no step " + std::to_string(k);
    const TraceStep& step = expected.steps[k];
    const RecordedTrace& trace = *expected.trace;
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    if (trace.hasSegmentEvents) {
        std::vector<const RecordedEntry*> want;
        for (std::size_t i = step.begin; i < last; ++i) {
            if (TraceSteps::isSegmentEvent(trace.entries[i].action)) want.push_back(&trace.entries[i]);
        }
        std::vector<const Event*> got;
        for (const Event& e : out.events) {
            if (TraceSteps::isSegmentEvent(e.action)) got.push_back(&e);
        }
        for (std::size_t i = 0; i < want.size() || i < got.size(); ++i) {
            const bool same = i < want.size() && i < got.size() && want[i]->action == got[i]->action &&
                              want[i]->address == got[i]->address && want[i]->size == got[i]->size;
            if (same) continue;
            const std::string w = i < want.size() ? describe(want[i]->action, want[i]->address, want[i]->size)
                                                  : std::string("nothing more");
            const std::string g = i < got.size() ? describe(got[i]->action, got[i]->address, got[i]->size)
                                                 : std::string("nothing more");
            return "segment event " + std::to_string(i) + " of the step: recorded " + w + ", replay did " + g;
        }
    }
    if (program && step.program != kNoEntry) {
        const RecordedEntry& e = trace.entries[step.program];
        if (e.action != program->action) {
            return std::string("the recording has ") + std::string(actionName(e.action)) + " where the replay has " +
                   std::string(actionName(program->action));
        }
        if (out.oomVanished) return "the recorded out-of-memory did not happen: the allocation succeeded";
        if (e.action == EventAction::Alloc && out.allocAddress && *out.allocAddress != e.address) {
            return describe(EventAction::Alloc, e.address, e.size) + " recorded, replay placed the block at " +
                   describe(EventAction::Alloc, *out.allocAddress, e.size);
        }
    }
    return "";
}

std::string compareLayout(const std::vector<SegmentInfo>& want, const std::vector<SegmentInfo>& got) {
    auto seg = [](const SegmentInfo& s) {
        std::ostringstream o;
        o << "segment 0x" << std::hex << s.address << std::dec << " (" << s.totalSize << " B)";
        return o.str();
    };
    for (std::size_t i = 0; i < want.size() || i < got.size(); ++i) {
        if (i >= want.size()) return "replay has an extra " + seg(got[i]);
        if (i >= got.size()) return "replay lacks " + seg(want[i]);
        const SegmentInfo& w = want[i];
        const SegmentInfo& g = got[i];
        if (w.address != g.address || w.totalSize != g.totalSize) return "recorded " + seg(w) + ", replay has " + seg(g);
        if (w.allocatedSize != g.allocatedSize || w.activeSize != g.activeSize || w.requestedSize != g.requestedSize ||
            w.stream != g.stream || w.pool != g.pool || w.isExpandable != g.isExpandable) {
            return seg(w) + ": sizes, stream, pool or expandability differ";
        }
        for (std::size_t b = 0; b < w.blocks.size() || b < g.blocks.size(); ++b) {
            if (b >= w.blocks.size() || b >= g.blocks.size()) return seg(w) + ": a different number of blocks";
            const BlockInfo& wb = w.blocks[b];
            const BlockInfo& gb = g.blocks[b];
            if (wb.address != gb.address || wb.size != gb.size || wb.requestedSize != gb.requestedSize ||
                wb.state != gb.state) {
                std::ostringstream o;
                o << seg(w) << ": block " << b << " recorded 0x" << std::hex << wb.address << std::dec << " " << wb.size
                  << " B requested " << wb.requestedSize << " " << blockStateName(wb.state) << ", replay 0x" << std::hex
                  << gb.address << std::dec << " " << gb.size << " B requested " << gb.requestedSize << " "
                  << blockStateName(gb.state);
                return o.str();
            }
        }
    }
    return "";
}

bool stepHasRelease(const RecordedTrace& trace, const TraceStep& step) {
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    for (std::size_t i = step.begin; i < last; ++i) {
        if (TraceSteps::isRelease(trace.entries[i].action)) return true;
    }
    return false;
}

}  // namespace

ReplayResult TraceReplayer::replay(const RecordedTrace& trace, const ReplayOptions& options) {
    ReplayResult result;
    const std::vector<TraceStep> steps = TraceSteps::cut(trace);
    result.steps = steps.size();

    Expected expected;
    expected.trace = options.expected ? options.expected : (options.placement ? nullptr : &trace);
    if (expected.trace) expected.steps = expected.trace == &trace ? steps : TraceSteps::cut(*expected.trace);

    const bool infer = !options.emptyCacheSteps && !options.placement && trace.hasSegmentEvents;
    std::set<std::size_t> given;
    if (options.emptyCacheSteps) given.insert(options.emptyCacheSteps->begin(), options.emptyCacheSteps->end());
    std::vector<bool> emptyCache(steps.size(), false);

    auto run = std::make_unique<ReplayRun>(trace, steps, options);
    for (std::size_t k = 0; k < steps.size(); ++k) {
        const TraceStep& step = steps[k];
        const RecordedEntry* program = step.program == kNoEntry ? nullptr : &trace.entries[step.program];
        bool want = given.count(k) > 0;
        bool tryBoth = false;
        if (infer && stepHasRelease(trace, step)) {
            // Frees never release segments; after the last program event nothing else could.
            if (!program || program->action == EventAction::FreeRequested || program->action == EventAction::FreeCompleted) {
                want = true;
            } else {
                tryBoth = true;
            }
        }
        StepOutcome out = run->runStep(k, want);
        std::string mismatch = compareStep(expected, k, program, out);
        if (tryBoth && !mismatch.empty()) {
            // Rebuild the state before step k and try the step after an explicit empty_cache().
            auto alt = std::make_unique<ReplayRun>(trace, steps, options);
            for (std::size_t j = 0; j < k; ++j) alt->runStep(j, emptyCache[j]);
            StepOutcome altOut = alt->runStep(k, true);
            ++result.rewinds;
            std::string altMismatch = compareStep(expected, k, program, altOut);
            if (altMismatch.empty()) {
                run = std::move(alt);
                out = std::move(altOut);
                mismatch.clear();
                want = true;
            }
        }
        emptyCache[k] = want;
        if (want) result.emptyCacheSteps.push_back(k);
        if (!mismatch.empty() && !result.divergence) {
            result.divergence = ReplayDivergence{out.programOp, program ? step.program : step.end - 1, mismatch};
        }
        if (options.sink) {
            for (const Event& e : out.events) options.sink->onEvent(e);
        }
        for (std::string& note : out.notes) result.notes.push_back(std::move(note));
        if (out.oomVanished) {
            result.notes.push_back("op " + std::to_string(out.programOp) +
                                   ": the out-of-memory error recorded here did not happen in the replay");
        }
        if (out.unexpectedOom) {
            if (!result.unexpectedOomOp) {
                result.unexpectedOomOp = out.programOp;
                result.unexpectedOomMessage = out.oomMessage;
            }
            if (!options.continueAfterOom) {
                result.stoppedEarly = true;
                break;
            }
        }
    }
    if (!result.stoppedEarly) run->finish();

    CachingAllocator& allocator = run->allocator();
    result.stats = allocator.stats();
    result.segments = allocator.segments();
    result.summary = allocator.memorySummary(static_cast<int>(trace.device));
    result.events = run->eventCount();
    result.program = std::move(run->program());
    if (expected.trace && expected.trace->finalSegments && !result.stoppedEarly) {
        std::string diff = compareLayout(*expected.trace->finalSegments, result.segments);
        if (!diff.empty()) result.layoutDifference = diff;
    }
    return result;
}

ReplayResult TraceReplayer::replayWhatIf(const RecordedTrace& trace, const AllocatorConfig& recordedConfig,
                                         ReplayOptions options) {
    if (!options.emptyCacheSteps && trace.hasSegmentEvents) {
        ReplayOptions exact = options;
        exact.config = recordedConfig;
        exact.placement = nullptr;
        exact.expected = nullptr;
        exact.sink = nullptr;
        exact.continueAfterOom = true;
        options.emptyCacheSteps = replay(trace, exact).emptyCacheSteps;
    }
    return replay(trace, options);
}

}  // namespace allocscope::alloc
