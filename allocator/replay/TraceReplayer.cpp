#include "allocator/replay/TraceReplayer.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "allocator/core/ReservationSize.h"
#include "allocator/replay/PoolRouting.h"
#include "allocator/replay/RelativeAddresses.h"
#include "allocator/replay/ReplayRun.h"
#include "allocator/replay/ReplayStart.h"
#include "allocator/replay/StepCursor.h"
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
    // Another trace's steps, cut in step with the replay's; null when the replayed trace is its
    // own expectation (its steps are the replay's).
    std::unique_ptr<StepCursor> ownSteps;
    // Another process's recording (a what-if compared with a run under its config) has its own
    // virtual addresses: it is compared by position (segment ordinal + offset) instead.
    bool translate = false;
    std::unique_ptr<RelativeAddresses> recordedPositions;
    std::unique_ptr<RelativeAddresses> replayPositions;
};

// Compares by position (segment ordinal + offset) instead of by address: see RelativeAddresses.
std::string compareStepByPosition(Expected& expected, const TraceStep& step, const RecordedEntry* program,
                                  const StepOutcome& out) {
    const RecordedTrace& trace = *expected.trace;
    RelativeAddresses& rec = *expected.recordedPositions;
    RelativeAddresses& rep = *expected.replayPositions;
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    std::vector<const RecordedEntry*> want;
    for (std::size_t i = step.begin; i < last; ++i) {
        if (TraceSteps::isSegmentEvent(trace.entries[i].action)) want.push_back(&trace.entries[i]);
    }
    std::vector<const Event*> got;
    for (const Event& e : out.events) {
        if (TraceSteps::isSegmentEvent(e.action)) got.push_back(&e);
    }
    // Where an event lands: after noting it for creations, before for releases.
    auto position = [](RelativeAddresses& r, EventAction a, std::uint64_t address, std::uint64_t size) {
        const bool release = TraceSteps::isRelease(a);
        std::optional<RelativePosition> before = r.locate(address);
        r.note(a, address, size);
        return release ? before : r.locate(address);
    };
    std::string mismatch;
    for (std::size_t i = 0; i < want.size() || i < got.size(); ++i) {
        std::optional<RelativePosition> wp, gp;
        if (i < want.size()) wp = position(rec, want[i]->action, want[i]->address, want[i]->size);
        if (i < got.size()) gp = position(rep, got[i]->action, got[i]->address, got[i]->size);
        if (!mismatch.empty()) continue;
        const bool same = i < want.size() && i < got.size() && want[i]->action == got[i]->action &&
                          want[i]->size == got[i]->size && wp == gp;
        if (same) continue;
        const std::string w = i < want.size() ? std::string(actionName(want[i]->action)) + " " +
                                                    std::to_string(want[i]->size) + " B at " + RelativeAddresses::describe(wp)
                                              : std::string("nothing more");
        const std::string g = i < got.size() ? std::string(actionName(got[i]->action)) + " " +
                                                   std::to_string(got[i]->size) + " B at " + RelativeAddresses::describe(gp)
                                             : std::string("nothing more");
        mismatch = "segment event " + std::to_string(i) + " of the step: recorded " + w + ", replay did " + g;
    }
    if (!mismatch.empty() || !program || step.program == kNoEntry) return mismatch;
    const RecordedEntry& e = trace.entries[step.program];
    if (e.action != program->action) {
        return std::string("the recording has ") + std::string(actionName(e.action)) + " where the replay has " +
               std::string(actionName(program->action));
    }
    if (out.oomVanished) return "the recorded out-of-memory did not happen: the allocation succeeded";
    if (e.action == EventAction::Alloc && out.allocAddress) {
        const std::optional<RelativePosition> wp = rec.locate(e.address);
        const std::optional<RelativePosition> gp = rep.locate(*out.allocAddress);
        if (wp != gp) {
            return "alloc of " + std::to_string(e.size) + " B: recorded at " + RelativeAddresses::describe(wp) +
                   ", replay at " + RelativeAddresses::describe(gp);
        }
    }
    return "";
}

// The first of a step's segment events where the recording (`want`) and the replay (`got`)
// differ; null on the side that has no more.
struct SegmentDifference {
    std::size_t index = 0;
    const RecordedEntry* want = nullptr;
    const Event* got = nullptr;
};

std::optional<SegmentDifference> firstSegmentDifference(const RecordedTrace& trace, const TraceStep& step,
                                                        const StepOutcome& out) {
    // Side by side (every step of a big import comes here: no lists are built).
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    std::size_t r = step.begin;
    std::size_t p = 0;
    for (std::size_t i = 0;; ++i, ++r, ++p) {
        while (r < last && !TraceSteps::isSegmentEvent(trace.entries[r].action)) ++r;
        while (p < out.events.size() && !TraceSteps::isSegmentEvent(out.events[p].action)) ++p;
        const RecordedEntry* want = r < last ? &trace.entries[r] : nullptr;
        const Event* got = p < out.events.size() ? &out.events[p] : nullptr;
        if (want == nullptr && got == nullptr) return std::nullopt;
        if (want == nullptr || got == nullptr || want->action != got->action || want->address != got->address ||
            want->size != got->size) {
            return SegmentDifference{i, want, got};
        }
    }
}

// MemoryPressure of a mismatching step: a release on one side only, or an OOM on one side only.
// Anything else (another address, another segment released) says nothing about the limit.
MemoryPressure pressureOf(const Expected& expected, const TraceStep* expectedStep, const StepOutcome& out) {
    if (out.unexpectedOom) return MemoryPressure::Higher;
    if (out.oomVanished) return MemoryPressure::Lower;
    if (!expected.trace || !expectedStep || expected.translate || !expected.trace->hasSegmentEvents) {
        return MemoryPressure::Unknown;
    }
    const std::optional<SegmentDifference> d = firstSegmentDifference(*expected.trace, *expectedStep, out);
    if (!d) return MemoryPressure::Unknown;
    const bool replayReleased = d->got != nullptr && TraceSteps::isRelease(d->got->action);
    const bool recordedReleased = d->want != nullptr && TraceSteps::isRelease(d->want->action);
    if (replayReleased && !recordedReleased) return MemoryPressure::Higher;
    if (recordedReleased && !replayReleased) return MemoryPressure::Lower;
    return MemoryPressure::Unknown;
}

// What differs between the replayed step and the expected recording's step k, `step` (null: the
// recording has no step k) ("" = nothing).
std::string compareStep(Expected& expected, std::size_t k, const TraceStep* expectedStep, const RecordedEntry* program,
                        const StepOutcome& out) {
    if (out.unexpectedOom) return "the allocation failed (out of memory) where the recording succeeded";
    if (!expected.trace) return {};
    if (!expectedStep) return "the expected recording has no step " + std::to_string(k);
    const TraceStep& step = *expectedStep;
    if (expected.translate) return compareStepByPosition(expected, step, program, out);
    const RecordedTrace& trace = *expected.trace;
    if (trace.hasSegmentEvents) {
        if (const std::optional<SegmentDifference> d = firstSegmentDifference(trace, step, out)) {
            const std::string w =
                d->want != nullptr ? describe(d->want->action, d->want->address, d->want->size) : std::string("nothing more");
            const std::string g =
                d->got != nullptr ? describe(d->got->action, d->got->address, d->got->size) : std::string("nothing more");
            return "segment event " + std::to_string(d->index) + " of the step: recorded " + w + ", replay did " + g;
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
    return {};
}

std::string compareLayout(std::vector<SegmentInfo> want, const std::vector<SegmentInfo>& got, std::uint64_t offset) {
    for (SegmentInfo& s : want) {
        s.address -= offset;
        for (BlockInfo& b : s.blocks) b.address -= offset;
    }
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

// Another process's layout: the same segments and blocks, each segment shifted as a whole.
std::string compareLayoutShape(const std::vector<SegmentInfo>& want, const std::vector<SegmentInfo>& got) {
    if (want.size() != got.size()) {
        return "recorded " + std::to_string(want.size()) + " segments, replay has " + std::to_string(got.size());
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
        std::vector<SegmentInfo> w{want[i]};
        const std::uint64_t shift = want[i].address - got[i].address;
        std::string diff = compareLayout(w, {got[i]}, shift);
        if (!diff.empty()) return "segment " + std::to_string(i) + " in address order: " + diff;
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

// Which pool guesses (PoolRouting rule 3) the first difference points at, most likely first:
// the replay's block landed in a guessed segment the recording did not use, or the recording's
// block lies in a guessed segment the replay's best fit passed over, or empty_cache() released a
// guessed segment where PyTorch released another, or this step's own guess made (or failed to
// make) a segment the recording did not. Several can explain one difference: the inference tries
// each and keeps the one that carries the replay furthest.
std::vector<std::size_t> poolHints(const RecordedTrace& trace, const TraceStep& step, const RecordedEntry* program,
                                   const StepOutcome& out, ReplayRun& run) {
    std::vector<std::size_t> hints;
    auto add = [&hints](std::optional<std::size_t> entry) {
        if (entry && std::find(hints.begin(), hints.end(), *entry) == hints.end()) hints.push_back(*entry);
    };
    if (program && program->action == EventAction::Alloc && out.allocAddress && *out.allocAddress != program->address) {
        for (const Event& e : out.events) {
            if (e.action == EventAction::Alloc) add(run.guessedCreator(e.segment));
        }
        for (const SegmentInfo& s : run.allocator().segments()) {
            if (program->address >= s.address && program->address - s.address < s.totalSize) {
                add(run.guessedCreator(s.address));
            }
        }
    }
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    std::vector<const RecordedEntry*> want;
    for (std::size_t i = step.begin; i < last; ++i) {
        if (TraceSteps::isSegmentEvent(trace.entries[i].action)) want.push_back(&trace.entries[i]);
    }
    std::size_t i = 0;
    for (const Event& e : out.events) {
        if (!TraceSteps::isSegmentEvent(e.action)) continue;
        const bool same = i < want.size() && want[i]->action == e.action && want[i]->address == e.address;
        if (!same && TraceSteps::isRelease(e.action)) add(run.guessedCreator(e.segment));
        if (!same) break;
        ++i;
    }
    // The block the replay reused instead of the recording's new segment: its creator's guess.
    if (program && program->action == EventAction::Alloc && out.allocAddress) {
        for (const SegmentInfo& s : run.allocator().segments()) {
            if (*out.allocAddress >= s.address && *out.allocAddress - s.address < s.totalSize) {
                add(run.guessedCreator(s.address));
            }
        }
    }
    if (out.poolGuessed && step.program != kNoEntry) add(step.program);
    return hints;
}

// One replay of the whole trace. `routing` null: every allocation from the default pools.
// `hints`: where to put the pool guesses the first difference points at.
ReplayResult replayOnce(const RecordedTrace& trace, const ReplayOptions& options, PoolRouting* routing,
                        std::vector<std::size_t>* hints) {
    ReplayResult result;
    result.totalMemory = options.totalMemory;
    result.otherMemory = options.otherMemory;
    if (routing) routing->startReplay();
    // Steps are cut as the replay reaches them: a big trace's are never all held.
    StepCursor cursor(trace);
    TraceStep step;
    bool more = cursor.next(step);
    const std::optional<TraceStep> firstStep = more ? std::optional<TraceStep>(step) : std::nullopt;

    Expected expected;
    expected.trace = options.expected ? options.expected : (options.placement ? nullptr : &trace);
    if (expected.trace && expected.trace != &trace) expected.ownSteps = std::make_unique<StepCursor>(*expected.trace);
    expected.translate = expected.trace && expected.trace != &trace && expected.trace->hasSegmentEvents && options.placement;
    if (expected.translate) {
        const std::uint64_t page = 2 * kMiB;  // the small pool's page: the smallest extent
        const std::uint64_t extent = ReservationSize::of(options.totalMemory, page);
        expected.recordedPositions = std::make_unique<RelativeAddresses>(extent);
        expected.replayPositions = std::make_unique<RelativeAddresses>(extent);
    }

    const bool infer = !options.emptyCacheSteps && !options.placement && trace.hasSegmentEvents;
    std::set<std::size_t> given;
    if (options.emptyCacheSteps) given.insert(options.emptyCacheSteps->begin(), options.emptyCacheSteps->end());

    if (routing) routing->assignments().clear();
    // A history that starts mid-run (HistoryWindow): every run, a rewind's too, starts from the
    // state before the first recorded entry; the events that rebuild it go first to the sink.
    const HistoryWindow window(trace, options.config);
    ReplayStart start = startReplay(trace, firstStep, options, routing, window);
    auto run = std::move(start.run);
    if (start.restoredState) {
        result.truncation = window.truncation();
        result.truncation->restoredEvents = start.restored.size();
        if (options.sink) {
            for (const Event& e : start.restored) options.sink->onEvent(e);
        }
        if (options.afterStep) options.afterStep(run->allocator().stats());
    }
    const std::string problem = !start.problem.empty() ? start.problem : window.problem();
    if (!start.restoredState && !problem.empty()) {
        result.notes.push_back("the state before the recorded history could not be rebuilt (" + problem +
                               "): the replay starts from an empty allocator");
    }
    // A big trace's entries leave memory behind the replay (SpillArray); so do the expected
    // recording's when it is another trace (a what-if compared with it).
    SpillArray<RecordedEntry>::Walk entryWalk(trace.entries);
    std::optional<SpillArray<RecordedEntry>::Walk> expectedWalk;
    if (expected.ownSteps) expectedWalk.emplace(expected.trace->entries);
    TraceStep otherStep;  // the expected recording's step k, when it is another trace
    // The accepted run's phase marks, named by its program's labels (`run` may be replaced by a rewind).
    const auto tellPhases = [&options, &run](const std::vector<AppliedPhase>& marks) {
        if (!options.onPhase) return;
        for (const AppliedPhase& mark : marks) options.onPhase(mark.opIndex, run->program().labels[mark.label], mark.begin);
    };
    StepOutcome out;  // one for every step: its buffers keep their capacity
    for (std::size_t k = 0; more; ++k, more = cursor.next(step)) {
        entryWalk.at(step.begin);
        const TraceStep* expectedStep = &step;
        if (expected.ownSteps) {
            expectedStep = expected.ownSteps->next(otherStep) ? &otherStep : nullptr;
            if (expectedStep) expectedWalk->at(otherStep.begin);
        }
        const RecordedEntry* program = step.program == kNoEntry ? nullptr : &trace.entries[step.program];
        bool want = given.count(k) > 0;
        bool tryBoth = false;
        std::vector<std::size_t> altHints;
        if (infer && stepHasRelease(trace, step)) {
            // Frees never release segments; after the last program event nothing else could.
            if (!program || program->action == EventAction::FreeRequested || program->action == EventAction::FreeCompleted) {
                want = true;
            } else {
                tryBoth = true;
            }
        }
        run->runStep(k, step, want, out);
        std::string mismatch = compareStep(expected, k, expectedStep, program, out);
        if (tryBoth && !mismatch.empty()) {
            // Rebuild the state before step k and try the step after an explicit empty_cache().
            auto alt = startReplay(trace, firstStep, options, routing, window).run;
            StepCursor rerun(trace);
            SpillArray<RecordedEntry>::Walk rerunEntries(trace.entries);
            TraceStep past;
            // The steps replayed after an empty_cache() so far are result.emptyCacheSteps, in
            // step order: a list of the few such steps rather than a flag per step, so that
            // nothing here grows with the trace's length.
            auto emptied = result.emptyCacheSteps.cbegin();
            for (std::size_t j = 0; j < k && rerun.next(past); ++j) {
                rerunEntries.at(past.begin);
                const bool afterEmptyCache = emptied != result.emptyCacheSteps.cend() && *emptied == j;
                if (afterEmptyCache) ++emptied;
                alt->runStep(j, past, afterEmptyCache);
            }
            StepOutcome altOut = alt->runStep(k, step, true);
            ++result.rewinds;
            std::string altMismatch = compareStep(expected, k, expectedStep, program, altOut);
            if (altMismatch.empty()) {
                run = std::move(alt);
                out = std::move(altOut);
                mismatch.clear();
                want = true;
            } else if (hints && routing && !result.divergence) {
                // Neither variant matched. The one with the empty_cache() can name a guess the
                // one without cannot: a segment it released among the default pool's although
                // PyTorch released it with a freeable private pool (release_cached_blocks frees
                // the default pools first, then graph_pools_freeable), or kept.
                altHints = poolHints(trace, step, program, altOut, *alt);
            }
        }
        if (want) result.emptyCacheSteps.push_back(k);
        if (!mismatch.empty() && !result.divergence) {
            result.divergence = ReplayDivergence{out.programOp, program ? std::size_t{step.program} : step.end - 1, mismatch,
                                                 pressureOf(expected, expectedStep, out)};
            result.totalMemoryBound = run->totalMemoryBound();
            if (hints && routing) {
                *hints = poolHints(trace, step, program, out, *run);
                for (const std::size_t entry : altHints) {
                    if (std::find(hints->begin(), hints->end(), entry) == hints->end()) hints->push_back(entry);
                }
            }
        }
        tellPhases(out.phases);
        if (options.sink) {
            for (const Event& e : out.events) options.sink->onEvent(e);
        }
        if (options.afterStep) options.afterStep(run->allocator().stats());
        for (std::string& note : out.notes) result.notes.push_back(std::move(note));
        if (out.oomVanished || out.oomReproduced) {
            result.recordedOoms.push_back({std::size_t{step.program}, out.programOp, out.oomReproduced, out.oom,
                                           out.reservedAtOom, out.allocatedAtOom});
        }
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
    if (!result.stoppedEarly) tellPhases(run->finish());
    // A replay that stopped early still counts every step.
    while (more && cursor.next(step)) {
    }
    result.steps = cursor.count();

    CachingAllocator& allocator = run->allocator();
    result.stats = allocator.stats();
    result.segments = allocator.segments();
    result.summary = allocator.memorySummary(static_cast<int>(trace.device));
    result.events = run->eventCount();
    result.addressTies = run->addressTies();
    result.program = std::move(run->program());
    result.opCount = run->opCount();
    if (expected.trace && expected.trace->finalSegments && !result.stoppedEarly) {
        std::string diff = expected.translate
                               ? compareLayoutShape(*expected.trace->finalSegments, result.segments)
                               : compareLayout(*expected.trace->finalSegments, result.segments, 0);
        if (!diff.empty()) result.layoutDifference = diff;
    }
    if (routing) result.poolAssignments = routing->assignments();
    return result;
}

// The trace entry of a result's first difference (later is closer to the recording).
std::size_t reach(const ReplayResult& r) {
    if (r.exact()) return kNoEntry;
    return r.divergence ? r.divergence->entryIndex : kNoEntry - 1;
}

}  // namespace

// Pool inference (PoolRouting) re-runs the whole trace once per revised guess: bounded, and only
// for traces small enough that this stays cheap (private-pool programs are CUDA graphs and
// MemPools; their snapshots seen so far have hundreds to thousands of entries).
constexpr std::size_t kMaxPoolRevisions = 48;
constexpr std::size_t kMaxPoolAttempts = 160;  // replays tried, over all revisions
constexpr std::size_t kMaxInferenceEntries = 200'000;

namespace {

// At most this many moves to a smaller device (each one lowers its total memory).
constexpr std::size_t kMaxDeviceMoves = 8;

// When `result`'s first difference is a new expandable reservation that the recording placed
// inside one of the replay's (ReplayRun::totalMemoryBound), moves `options` to the largest
// device the recording allows and returns true. A snapshot does not record the device's total
// memory, and the default (an H100's) reserves 9/8 of it per reservation: a recording made on a
// slightly smaller card places its next reservation where the H100's first one still is. The
// memory the allocator can get stays what the options gave (the CUDA context and other
// processes hold that much less): only the evidence about the device's size changed, not the
// evidence about its free memory (a limit inferred from a recorded OOM stays as inferred).
bool moveToSmallerDevice(const ReplayResult& result, ReplayOptions& options) {
    if (result.exact() || !result.totalMemoryBound || *result.totalMemoryBound >= options.totalMemory) return false;
    const std::uint64_t smaller = options.totalMemory - *result.totalMemoryBound;
    options.otherMemory -= std::min(options.otherMemory, smaller);
    options.totalMemory = *result.totalMemoryBound;
    return true;
}

// Replays with `replayOn` on `options`' device, then on smaller devices while the recording's
// reservations ask for one and the replay gets further on it; `options` ends as the device of
// the returned result. `replayOn` must be silent (no sink) unless the first replay is the last.
template <typename ReplayOn>
ReplayResult onRecordedDevice(ReplayOptions& options, ReplayOn&& replayOn) {
    ReplayResult result = replayOn(options);
    for (std::size_t n = 0; n < kMaxDeviceMoves; ++n) {
        ReplayOptions smaller = options;
        if (!moveToSmallerDevice(result, smaller)) break;
        ReplayResult again = replayOn(smaller);
        if (!again.exact() && reach(again) <= reach(result)) break;
        options = smaller;
        result = std::move(again);
    }
    return result;
}

// Whether a replay of `trace` under `options` can ask for a smaller device: its addresses come
// from a recording with segment events, and its allocator reserves expandable segments.
bool mayMoveDevice(const RecordedTrace& trace, const ReplayOptions& options) {
    return !options.placement && trace.hasSegmentEvents && options.config.expandableSegments;
}

void noteMovedDevice(const ReplayOptions& given, const ReplayOptions& used, ReplayResult& result) {
    if (used.totalMemory == given.totalMemory) return;
    result.notes.push_back("the recording's expandable reservations are smaller than the " + std::to_string(given.totalMemory) +
                           " B device's (9/8 of its memory each): replayed on a device of " +
                           std::to_string(used.totalMemory) + " B, the largest they allow, with the same memory free");
}

}  // namespace

ReplayResult TraceReplayer::replay(const RecordedTrace& trace, const ReplayOptions& options) {
    const bool observed = options.sink || options.afterStep;
    ReplayOptions quiet = options;
    quiet.sink = nullptr;
    quiet.afterStep = nullptr;
    const bool selfCompared = !options.placement && (!options.expected || options.expected == &trace);
    if (options.poolAssignments || !selfCompared || !trace.hasSegmentEvents || trace.entries.size() > kMaxInferenceEntries) {
        std::optional<PoolRouting> fixed;
        if (options.poolAssignments) fixed.emplace(*options.poolAssignments);
        auto replayOn = [&](const ReplayOptions& o) { return replayOnce(trace, o, fixed ? &*fixed : nullptr, nullptr); };
        ReplayOptions used = options;
        ReplayResult result;
        if (!mayMoveDevice(trace, options)) return replayOn(options);
        if (observed) {
            // Silent replays find the device first: the sink hears only the accepted one. The
            // cost is one more replay, only under expandable segments.
            onRecordedDevice(quiet, replayOn);
            used.totalMemory = quiet.totalMemory;
            used.otherMemory = quiet.otherMemory;
            result = replayOn(used);
        } else {
            result = onRecordedDevice(used, replayOn);
        }
        noteMovedDevice(options, used, result);
        return result;
    }
    // The attempts of the inference are silent: only the accepted replay reaches the sink and
    // afterStep, once, so an import never records a rejected guess's events. It runs again with
    // the routing that produced it (the same guesses give the same decisions).
    // An attempt stops at its first unexpected OOM (a wrong guess can make a recorded address
    // unavailable): going on would only move the first difference, and with it the next guess.
    quiet.continueAfterOom = false;
    // The routing found on each device tried (a smaller device's replay may replace both).
    std::map<std::uint64_t, std::optional<PoolRouting>> routings;
    // The device first: a difference that a smaller device removes is not one for pool guesses
    // (each guess is a replay of the whole trace).
    ReplayResult chosen = onRecordedDevice(quiet, [&](const ReplayOptions& o) {
        return inferPools(trace, o, routings[o.totalMemory], true);
    });
    std::optional<PoolRouting>& accepted = routings[quiet.totalMemory];
    // A first replay returned before its search (a smaller device did not help): search now.
    if (!chosen.exact() && chosen.totalMemoryBound && *chosen.totalMemoryBound < quiet.totalMemory) {
        chosen = inferPools(trace, quiet, accepted);
    }
    ReplayOptions used = options;
    used.totalMemory = quiet.totalMemory;
    used.otherMemory = quiet.otherMemory;
    if (!observed && (chosen.exact() || !options.continueAfterOom)) {
        noteMovedDevice(options, used, chosen);
        return chosen;
    }
    ReplayResult result = replayOnce(trace, used, accepted ? &*accepted : nullptr, nullptr);
    result.poolRevisions = chosen.poolRevisions;
    noteMovedDevice(options, used, result);
    return result;
}

namespace {

// One state of the pool inference: a routing, the replay it gives, and where that replay's first
// difference points.
struct Attempt {
    PoolRouting routing;
    ReplayResult result;
    std::vector<std::size_t> hints;
};

// Depth-first over flipped guesses. Several guesses can explain one difference and the replays
// after them can reach equally far (two allocations of the same size, say), so a greedy choice
// can lock in a wrong guess that only shows later: the search keeps the other choices and comes
// back to them when a branch stops getting further. Only flips that carry the replay further
// than its parent are followed, so every branch ends; the attempt budget bounds the whole search.
class PoolSearch {
public:
    PoolSearch(const RecordedTrace& trace, const ReplayOptions& options) : trace_(trace), options_(options) {}

    // The best attempt found from `start` (the exact one if any).
    Attempt run(Attempt start) {
        best_ = start;
        explore(start, 0);
        return std::move(best_);
    }

private:
    bool explore(const Attempt& node, std::size_t depth) {
        if (node.result.exact()) return true;
        if (depth >= kMaxPoolRevisions) return false;
        std::vector<Attempt> children;
        // Each hint flips one guess; a prior's private-pool guess can also start a new pool, at
        // the entry or at one of the few guesses before it (kNoNewPool: the plain flip).
        constexpr std::size_t kNoNewPool = static_cast<std::size_t>(-1);
        constexpr std::size_t kNewPoolStarts = 4;
        std::vector<std::pair<std::size_t, std::size_t>> flips;
        for (const std::size_t entry : node.hints) {
            flips.emplace_back(entry, kNoNewPool);
            for (std::size_t earlier = 0; earlier < kNewPoolStarts; ++earlier) flips.emplace_back(entry, earlier);
        }
        for (const auto& [entry, earlier] : flips) {
            if (attempts_ >= kMaxPoolAttempts) break;
            Attempt child{node.routing, {}, {}};
            const bool flipped = earlier == kNoNewPool ? child.routing.flip(entry) : child.routing.flipToNewPool(entry, earlier);
            if (!flipped) continue;
            child.result = replayOnce(trace_, options_, &child.routing, &child.hints);
            child.result.poolRevisions = child.routing.flips();
            ++attempts_;
            if (reach(child.result) <= reach(node.result)) continue;
            if (reach(child.result) > reach(best_.result)) best_ = child;
            if (child.result.exact()) return true;
            children.push_back(std::move(child));
        }
        std::stable_sort(children.begin(), children.end(), [](const Attempt& a, const Attempt& b) {
            return reach(a.result) > reach(b.result);
        });
        for (const Attempt& child : children) {
            if (explore(child, depth + 1)) return true;
        }
        return false;
    }

    const RecordedTrace& trace_;
    const ReplayOptions& options_;
    Attempt best_{PoolRouting(std::map<std::size_t, PoolId>{}), {}, {}};
    std::size_t attempts_ = 0;
};

}  // namespace

ReplayResult TraceReplayer::inferPools(const RecordedTrace& trace, const ReplayOptions& options,
                                       std::optional<PoolRouting>& accepted, bool deviceFirst) {
    PoolRouting routing(trace);
    std::vector<std::size_t> hints;
    if (routing.knownPrivatePools()) accepted = routing;
    ReplayResult first = replayOnce(trace, options, accepted ? &routing : nullptr, &hints);
    if (first.exact()) return first;
    if (deviceFirst && first.totalMemoryBound && *first.totalMemoryBound < options.totalMemory) return first;
    const std::optional<PoolRouting> firstRouting = accepted;
    Attempt start{routing, {}, {}};
    if (routing.knownPrivatePools()) {
        start.result = first;
        start.hints = std::move(hints);
    } else {
        start.result = replayOnce(trace, options, &start.routing, &start.hints);
    }
    Attempt found = PoolSearch(trace, options).run(std::move(start));
    if (!found.result.exact() && reach(first) > reach(found.result)) {
        accepted = firstRouting;
        return first;
    }
    accepted = std::move(found.routing);
    return std::move(found.result);
}

ReplayResult TraceReplayer::replayWhatIf(const RecordedTrace& trace, const AllocatorConfig& recordedConfig,
                                         ReplayOptions options) {
    if ((!options.emptyCacheSteps || !options.poolAssignments) && trace.hasSegmentEvents) {
        ReplayOptions exact = options;
        exact.config = recordedConfig;
        exact.placement = nullptr;
        exact.expected = nullptr;
        exact.sink = nullptr;
        exact.afterStep = nullptr;
        exact.continueAfterOom = true;
        const ReplayResult learnt = replay(trace, exact);
        if (!options.emptyCacheSteps) options.emptyCacheSteps = learnt.emptyCacheSteps;
        if (!options.poolAssignments) options.poolAssignments = learnt.poolAssignments;
    }
    return replay(trace, options);
}

}  // namespace allocscope::alloc
