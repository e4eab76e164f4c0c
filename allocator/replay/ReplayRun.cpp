#include "allocator/replay/ReplayRun.h"

#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>

#include "allocator/core/HexAddress.h"
#include "allocator/core/ReservationSize.h"
#include "allocator/core/RestorePlan.h"

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

ReplayRun::ReplayRun(const RecordedTrace& trace, const std::optional<TraceStep>& firstStep, const ReplayOptions& options)
    : trace_(trace),
      options_(options),
      capture_(std::make_unique<Capture>()),
      labelOfName_(trace.phaseNames.size(), kNoLabel),
      current_(firstStep),
      captures_(trace) {
    device_ = std::make_unique<SimulatedDevice>(options.totalMemory, options.otherMemory);
    device_->setAddressOracle([this](const PlacementRequest& request) { return oracle(request); });
    allocator_ = std::make_unique<CachingAllocator>(options.config, *device_, capture_.get());
    allocator_->setBestFitTieObserver([this](const BestFitTie& tie) { onTie(tie); });
    if (options.memoryFraction) allocator_->setMemoryFraction(*options.memoryFraction);
    capture_->events.clear();
}

ReplayRun::~ReplayRun() = default;

std::optional<std::uint64_t> ReplayRun::oracle(const PlacementRequest& request) {
    const std::map<std::uint64_t, std::uint64_t>& live = device_->liveRanges();
    // Bases that went back to the driver may come back for another segment: forget them.
    std::vector<std::uint64_t> gone;
    recordedBase_.forEach([&](std::uint64_t base, bool) {
        if (live.count(base) == 0) gone.push_back(base);
    });
    for (const std::uint64_t base : gone) recordedBase_.erase(base);
    // The recording's answer for this step is a fact for the replay only while the device holds
    // what the recorded one held: once a segment the recording never had is live, the real
    // driver's state differed, and so may its answers (train_gpt rup4, step 79).
    const bool sameState = std::all_of(live.begin(), live.end(), [this](const auto& range) {
        const bool* recorded = recordedBase_.find(range.first);
        return recorded != nullptr && *recorded;
    });
    std::optional<std::uint64_t> address;
    bool recorded = false;
    if (!options_.placement) {
        address = recordedAddress(request, live);
        recorded = address.has_value() && sameState;
    }
    if (!address) {
        PlacementModel* model = options_.placement ? options_.placement : options_.fallbackPlacement;
        if (model) address = model->place(request, live, step_);
        recorded = address && sameState && recordedInStep(request, *address);
    }
    if (address) recordedBase_.set(*address, recorded);
    return address;
}

bool ReplayRun::recordedInStep(const PlacementRequest& request, std::uint64_t address) const {
    if (!current_ || !trace_.hasSegmentEvents) return false;
    const TraceStep& step = *current_;
    for (std::size_t i = step.begin; i < step.end; ++i) {
        const RecordedEntry& e = trace_.entries[i];
        if (e.address != address) continue;
        if (request.kind == PlacementRequest::Kind::Segment && e.action == EventAction::SegmentAlloc && e.size == request.size) {
            return true;
        }
        if (request.kind == PlacementRequest::Kind::Reservation && e.action == EventAction::SegmentMap) return true;
    }
    return false;
}

void ReplayRun::onTie(const BestFitTie& tie) {
    auto modelled = [this](std::uint64_t base) {
        const bool* recorded = recordedBase_.find(base);
        return recorded == nullptr || !*recorded;
    };
    // One decision reports each equal candidate in turn (BestFitTie.h): count it once, and as
    // modelled once any of its candidates' segments (or the chosen one's) is.
    const bool sameDecision = lastTie_ && lastTie_->opIndex == tie.opIndex && lastTie_->chosen == tie.chosen &&
                              lastTie_->requestSize == tie.requestSize;
    const bool wasModelled = sameDecision && lastTieModelled_;
    if (!sameDecision) ++ties_.total;
    lastTie_ = tie;
    const bool chosen = modelled(tie.chosenSegment);
    const bool other = modelled(tie.otherSegment);
    lastTieModelled_ = wasModelled || chosen || other;
    if (wasModelled || (!chosen && !other)) return;
    ++ties_.modelled;
    if (ties_.firstModelled) return;
    std::size_t entry = 0;
    if (current_) {
        const TraceStep& step = *current_;
        entry = step.program != kNoEntry ? std::size_t{step.program} : step.end - 1;
    }
    ties_.firstModelled = AddressTie{tie, entry, chosen, other};
}

std::optional<std::uint64_t> ReplayRun::recordedAddress(const PlacementRequest& request,
                                                        const std::map<std::uint64_t, std::uint64_t>& live) {
    if (!current_) return std::nullopt;
    const TraceStep& step = *current_;
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
    if (request.kind == PlacementRequest::Kind::Reservation) noteSmallerReservation(step, last, live);
    return std::nullopt;
}

// The allocator wants a new reservation, and every map the recording made in this step lies in a
// live range. In the recording the step's new reservation began with a map at its base
// (find_expandable_block hands the whole fresh reservation to map_block), outside every live
// reservation; one of this device's covers that map, in pages it has not mapped: its reservation
// is larger than the recorded device's. Reservations do not overlap, so the recorded one ended
// at or below that map, and its size, 9/8 of the device's memory in whole pages (ReservationSize),
// bounds the recorded device's total memory (a 3-GPU field recording: its devices' reservations
// lay 0x1644000000 apart where an H100's take 0x1645400000). The bound must leave every live
// reservation room for the pages it has mapped, or the conflict is not about the device's size.
void ReplayRun::noteSmallerReservation(const TraceStep& step, std::size_t last,
                                       const std::map<std::uint64_t, std::uint64_t>& live) {
    const std::uint64_t total = options_.totalMemory;
    const std::uint64_t largePage = options_.config.largeSegmentSize;
    // A live range is a reservation when it has a reservation's size: a cudaMalloc'd segment is
    // never that large (it would need more than the device's memory). Where both pools' sizes
    // are equal the small page answers: its bound is never below the large page's, so a move
    // never goes past the device the recording needs (a later conflict tightens it).
    auto pageOf = [&](std::uint64_t size) -> std::uint64_t {
        if (size == ReservationSize::of(total, kSmallBuffer)) return kSmallBuffer;
        if (size == ReservationSize::of(total, largePage)) return largePage;
        return 0;
    };
    auto leavesRoom = [&](std::uint64_t bound) {
        return std::all_of(live.begin(), live.end(), [&](const auto& range) {
            const std::uint64_t page = pageOf(range.second);
            return page == 0 || ReservationSize::of(bound, page) >= device_->mappedEnd(range.first, range.second) - range.first;
        });
    };
    for (std::size_t i = step.begin; i < last; ++i) {
        const RecordedEntry& e = trace_.entries[i];
        if (e.action != EventAction::SegmentMap) continue;
        auto it = live.upper_bound(e.address);
        if (it == live.begin()) continue;
        --it;
        const auto [base, size] = *it;
        const std::uint64_t page = pageOf(size);
        if (page == 0 || e.address >= base + size || device_->mappedEnd(base, size) > e.address) continue;
        const std::uint64_t bound = ReservationSize::largestTotalWithin(e.address - base, page);
        if (bound == 0 || bound >= total || !leavesRoom(bound)) continue;
        if (!totalMemoryBound_ || bound < *totalMemoryBound_) totalMemoryBound_ = bound;
        return;
    }
}

std::uint64_t ReplayRun::push(const Op& op) {
    const std::uint64_t index = opCount_++;
    if (options_.keepOps) program_.ops.push_back(op);
    if (op.kind == OpKind::Phase) applied_.push_back(AppliedPhase{index, op.labelId, op.begin});
    allocator_->setOpIndex(index);
    return index;
}

void ReplayRun::emitPhases(std::size_t upToEntry) {
    while (nextPhase_ < trace_.phases.size() && trace_.phases[nextPhase_].entryIndex <= upToEntry) {
        const PhaseMark& mark = trace_.phases[nextPhase_++];
        // The program's label of the mark's name: given in the order names first occur.
        std::uint32_t& label = labelOfName_.at(mark.name);
        if (label == kNoLabel) {
            label = static_cast<std::uint32_t>(program_.labels.size());
            program_.labels.push_back(trace_.phaseName(mark));
        }
        push(Op::phase(label, mark.begin));
    }
}

std::vector<AppliedPhase> ReplayRun::finish() {
    emitPhases(kNoEntry - 1);
    return std::exchange(applied_, {});
}

// ---- a history that starts mid-run ----
// The exact replay rebuilds the state with restoreSegments, every segment and reservation at its
// snapshot address (the oracle answers from the same RestorePlan that restoreSegments follows).
// The Alloc ops let a what-if of this program (ProgramFromTrace: compare, recommend) start with
// the live tensors too. Limit: a what-if only allocates those tensors afresh under its own
// config; the cached free memory the real run held then, and the layout that history gave it,
// are not re-created, so a what-if starts like a fresh process holding just these tensors. A
// what-if replay here (a placement model) does the same with malloc.
std::vector<Event> ReplayRun::restore(const std::vector<SegmentInfo>& segments) {
    capture_->events.clear();
    const bool exact = options_.placement == nullptr;
    const std::uint64_t firstOp = opCount_;
    std::uint64_t id = trace_.entries.size();
    for (const SegmentInfo& segment : segments) {
        for (const BlockInfo& block : segment.blocks) {
            if (block.state == BlockState::Inactive) continue;
            const std::uint64_t tensor = id++;
            push(Op::alloc(tensor, block.requestedSize, segment.stream, block.stackId));
            std::optional<std::uint64_t> address = block.address;
            if (!exact) address = allocator_->malloc(block.requestedSize, segment.stream, block.stackId);
            if (!address) continue;  // a what-if without room for it: its later free is a note
            if (block.state == BlockState::ActivePendingFree) {
                push(Op::recordStream(tensor, kReplaySideStream));
                push(Op::free(tensor));
                if (!exact) {
                    allocator_->recordStream(*address, kReplaySideStream);
                    allocator_->free(*address);
                }
                pendingByRecorded_.set(block.address, tensor);
            } else {
                liveByRecorded_.set(block.address, tensor);
            }
            replayAddress_.set(tensor, *address);
        }
    }
    if (exact) {
        const std::vector<RestoredSpace> plan = planRestore(segments, options_.config, options_.totalMemory);
        std::size_t next = 0;
        device_->setAddressOracle([&plan, &next](const PlacementRequest&) {
            return next < plan.size() ? std::optional<std::uint64_t>(plan[next++].address) : std::nullopt;
        });
        allocator_->setOpIndex(firstOp);
        allocator_->restoreSegments(segments);
        for (const SegmentInfo& segment : segments) recordedBase_.set(segment.address, true);  // the snapshot's own
        device_->setAddressOracle([this](const PlacementRequest& request) { return oracle(request); });
    }
    eventCount_ += capture_->events.size();
    std::vector<Event> events = std::move(capture_->events);
    capture_->events.clear();
    return events;
}

std::optional<std::size_t> ReplayRun::guessedCreator(std::uint64_t segment) const {
    auto it = guessedSegments_.find(segment);
    if (it == guessedSegments_.end()) return std::nullopt;
    return it->second;
}

// A private pool's allocation: the program creates the pool once, and routes this one request
// to it on its stream (as a capture or use_mem_pool scope does for every request it covers).
PoolId ReplayRun::beginRoute(std::size_t entry, const RecordedEntry& e, bool& guessed) {
    guessed = false;
    if (routing_ == nullptr) return PoolId{};
    const StreamId stream = trace_.stream(e);
    // CUDAGraph::capture_begin registers the default CUDA generator with the graph before it calls
    // beginAllocateToPool: the first graph registered allocates the generator's seed and offset
    // (CUDAGeneratorState::register_graph, at::empty on the capture stream), from the default
    // pool. Those allocations (graphs.py capture_begin in the stack) get no capture prior; they
    // mark the capture's start, whose own allocations on that stream follow.
    const bool inBegin = stream != 0 && captures_.inCaptureBegin(e.stackId);
    const std::optional<PoolId> prior = inBegin ? std::nullopt : captures_.prior(entry, stream, *routing_);
    const PoolId pool = routing_->poolFor(entry, e.address, *allocator_, guessed, prior);
    // torch.cuda.graph's __enter__ calls empty_cache() before a capture; with nothing cached to
    // release the trace shows nothing of it, but PyTorch counts it (num_sync_all_streams).
    if (captures_.startsCapture(entry, e.stackId, stream, inBegin, pool) && !emptyCacheThisStep_) {
        push(Op::simple(OpKind::EmptyCache));
        allocator_->emptyCache();
    }
    if (pool.isDefault()) return pool;
    if (createdPools_.insert(pool).second) {
        push(Op::pool(OpKind::CreatePool, pool));
        allocator_->createPool(pool);
    }
    push(Op::pool(OpKind::BeginAllocateToPool, pool, 0, stream));
    allocator_->beginAllocateToPool(pool, stream, false);
    return pool;
}

// Like leaving a use_mem_pool scope: end the routing and drop the use beginAllocateToPool added,
// so the pool keeps only the use its creation gave it (released when its owner goes).
void ReplayRun::endRoute(PoolId pool) {
    if (pool.isDefault()) return;
    push(Op::pool(OpKind::EndAllocateToPool, pool));
    allocator_->endAllocateToPool(pool);
    push(Op::pool(OpKind::ReleasePool, pool));
    allocator_->releasePool(pool);
}

// empty_cache() releases a private pool's segments only once the pool is freeable (its graph or
// MemPool is gone), which no trace entry shows: a recorded release of a pool's segment says it was.
// A graph's pool is released when the graph is reset, and its segments go with the next
// torch.cuda.empty_cache(). A MemPool's destructor releases the pool and at once calls
// emptyCache(its id), a sync of its own: its releases are the ones whose Python stack is not in
// torch.cuda.empty_cache(). Those pools are returned for the caller to release after the step's
// empty_cache(), in the order the recording shows (the default pool's segments first). Without a
// stack the release is taken as the explicit call's (one sync fewer if a MemPool did it).
ReplayRun::PoolReleases ReplayRun::releasePoolsFreedIn(const TraceStep& step) {
    PoolReleases out;
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    for (std::size_t i = step.begin; i < last; ++i) {
        const RecordedEntry& e = trace_.entries[i];
        if (!TraceSteps::isRelease(e.action)) continue;
        const std::optional<PoolId> pool = allocator_->poolOfAddress(e.address);
        const bool byOwner = pool && !pool->isDefault() && inEmptyCacheCall(e.stackId) == false;
        if (byOwner && !out.others) out.ownersFirst = true;
        if (!byOwner) out.others = true;
        if (!pool || pool->isDefault() || createdPools_.erase(*pool) == 0) continue;
        if (byOwner) {
            out.byOwner.push_back(*pool);
            continue;
        }
        push(Op::pool(OpKind::ReleasePool, *pool));
        allocator_->releasePool(*pool);
    }
    return out;
}

// An allocation that finds no memory retries after release_cached_blocks (c10 malloc), which
// frees the default pools' whole free segments and then those of every freeable private pool
// (graph_pools_freeable: use_count 0). A recorded release of a private pool's segment in the step
// of an allocation says that pool's owner was gone before it: release the pool, and the retry
// frees what PyTorch's did. (With an explicit empty_cache() in the step instead, the variant
// with the empty_cache() does the same through releasePoolsFreedIn.) A release whose Python stack
// is neither an empty_cache() nor the allocation's own (mempool_retry: `del pool` in an OOM
// handler, then the allocation tried again) was a MemPool's destructor: it calls emptyCache(its
// id), a sync of its own, before the allocation; a retry's releases carry the allocation's stack.
void ReplayRun::releaseRetriedPools(const TraceStep& step) {
    const std::size_t last = step.program == kNoEntry ? step.end : step.program;
    for (std::size_t i = step.begin; i < last; ++i) {
        const RecordedEntry& e = trace_.entries[i];
        if (!TraceSteps::isRelease(e.action)) continue;
        const std::optional<PoolId> pool = allocator_->poolOfAddress(e.address);
        if (!pool || pool->isDefault() || createdPools_.erase(*pool) == 0) continue;
        push(Op::pool(OpKind::ReleasePool, *pool));
        allocator_->releasePool(*pool);
        if (PoolRouting::releasedByPoolOwner(trace_, i)) {
            push(Op::pool(OpKind::EmptyCache, *pool));
            allocator_->emptyCache(*pool);
        }
    }
}

std::optional<bool> ReplayRun::inEmptyCacheCall(std::uint32_t stackId) const {
    return PoolRouting::inEmptyCacheCall(trace_.stacks, stackId);
}

void ReplayRun::runStep(std::size_t k, const TraceStep& step, bool withEmptyCache, StepOutcome& out) {
    out.clear();
    step_ = k;
    current_ = step;
    segmentAllocUsed_.assign(step.end - step.begin, false);
    emitPhases(step.program == kNoEntry ? step.end : step.program);
    out.phases.swap(applied_);  // applied_ gets the outcome's emptied buffer
    capture_->events.clear();
    emptyCacheThisStep_ = withEmptyCache;
    if (withEmptyCache) {
        PoolReleases released{{}, true, false};
        if (routing_ != nullptr) released = releasePoolsFreedIn(step);
        // Only pools their owners released went: no torch.cuda.empty_cache() call did it. Where
        // both did, the recording's order says which came first (graph_in_mempool: `del pool`,
        // then torch.cuda.empty_cache()).
        const bool explicitCall = released.others || released.byOwner.empty();
        auto explicitEmptyCache = [&] {
            out.programOp = push(Op::simple(OpKind::EmptyCache));
            allocator_->emptyCache();
        };
        if (explicitCall && !released.ownersFirst) explicitEmptyCache();
        for (const PoolId pool : released.byOwner) {
            push(Op::pool(OpKind::ReleasePool, pool));
            allocator_->releasePool(pool);
            const std::uint64_t op = push(Op::pool(OpKind::EmptyCache, pool));
            if (!released.others && pool == released.byOwner.front()) out.programOp = op;
            allocator_->emptyCache(pool);
        }
        if (explicitCall && released.ownersFirst) explicitEmptyCache();
    } else if (routing_ != nullptr && step.program != kNoEntry) {
        releaseRetriedPools(step);
    }
    if (step.program != kNoEntry) {
        const RecordedEntry& e = trace_.entries[step.program];
        const std::uint64_t id = step.program;  // a tensor is named by its alloc's entry index
        switch (e.action) {
            case EventAction::Alloc: {
                const PoolId pool = beginRoute(step.program, e, out.poolGuessed);
                const StreamId stream = trace_.stream(e);
                out.programOp = push(Op::alloc(id, e.size, stream, e.stackId));
                const std::optional<std::uint64_t> address = allocator_->malloc(e.size, stream, e.stackId);
                endRoute(pool);
                if (out.poolGuessed) {
                    // A new segment, or the first map of a new reservation (a later map of the
                    // same reservation keeps the entry that created it).
                    for (const Event& event : capture_->events) {
                        if (event.action == EventAction::SegmentAlloc) guessedSegments_[event.segment] = step.program;
                        if (event.action == EventAction::SegmentMap) guessedSegments_.emplace(event.segment, step.program);
                    }
                }
                if (address) {
                    liveByRecorded_.set(e.address, id);
                    replayAddress_.set(id, *address);
                    out.allocAddress = address;
                } else {
                    out.unexpectedOom = true;
                    out.oomMessage = allocator_->lastOom().message;
                    liveByRecorded_.erase(e.address);
                }
                break;
            }
            case EventAction::Oom: {
                const StreamId stream = trace_.stream(e);
                out.programOp = push(Op::alloc(id, e.size, stream, e.stackId));
                const std::optional<std::uint64_t> address = allocator_->malloc(e.size, stream, e.stackId);
                if (address) {
                    // The program raised here in the recording and never held this tensor: drop
                    // it again so the rest of the program runs as recorded.
                    out.oomVanished = true;
                    push(Op::free(id));
                    allocator_->free(*address);
                } else {
                    // What the OOM answer reads: PyTorch's message and the memory it failed with.
                    out.oomReproduced = true;
                    out.oom = allocator_->lastOom();
                    out.reservedAtOom = allocator_->stats().reserved_bytes[kAggregate].current;
                    out.allocatedAtOom = allocator_->stats().allocated_bytes[kAggregate].current;
                }
                break;
            }
            case EventAction::FreeRequested: {
                const std::uint64_t* live = liveByRecorded_.find(e.address);
                if (live == nullptr) {
                    out.notes.push_back("trace entry " + std::to_string(std::size_t{step.program}) + ": free of " + hexAddress(e.address) +
                                        ", which the replay does not hold (allocated before recording started, "
                                        "or its allocation failed)");
                    break;
                }
                const std::uint64_t tensor = *live;
                const std::uint64_t address = replayAddress_.at(tensor);
                liveByRecorded_.erase(e.address);
                if (step.pendingFree) {
                    push(Op::recordStream(tensor, kReplaySideStream));
                    allocator_->recordStream(address, kReplaySideStream);
                }
                out.programOp = push(Op::free(tensor));
                allocator_->free(address);
                if (step.pendingFree) {
                    pendingByRecorded_.set(e.address, tensor);
                } else {
                    replayAddress_.erase(tensor);
                }
                break;
            }
            case EventAction::FreeCompleted: {
                const std::uint64_t* pending = pendingByRecorded_.find(e.address);
                if (pending == nullptr) {
                    out.notes.push_back("trace entry " + std::to_string(std::size_t{step.program}) + ": free_completed of " +
                                        hexAddress(e.address) + " without a pending free");
                    break;
                }
                const std::uint64_t tensor = *pending;
                out.programOp = push(Op::completePending(tensor));
                allocator_->completePendingFree(replayAddress_.at(tensor));
                replayAddress_.erase(tensor);
                pendingByRecorded_.erase(e.address);
                break;
            }
            default:
                break;
        }
    }
    eventCount_ += capture_->events.size();
    out.events.swap(capture_->events);  // the capture gets the outcome's emptied buffer
}

}  // namespace allocscope::alloc
