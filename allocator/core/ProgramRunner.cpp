#include "allocator/core/ProgramRunner.h"

#include <atomic>
#include <cmath>

namespace allocscope::alloc {

namespace {
const char* kindName(OpKind kind) {
    switch (kind) {
        case OpKind::Alloc: return "alloc";
        case OpKind::Free: return "free";
        case OpKind::RecordStream: return "record_stream";
        case OpKind::CompletePending: return "complete_pending";
        case OpKind::Synchronize: return "synchronize";
        case OpKind::EmptyCache: return "empty_cache";
        case OpKind::SetMemoryFraction: return "set_memory_fraction";
        case OpKind::ResetPeakStats: return "reset_peak_stats";
        case OpKind::ResetAccumulatedStats: return "reset_accumulated_stats";
        case OpKind::Phase: return "phase";
        case OpKind::CreatePool: return "create_pool";
        case OpKind::BeginAllocateToPool: return "begin_allocate_to_pool";
        case OpKind::EndAllocateToPool: return "end_allocate_to_pool";
        case OpKind::ReleasePool: return "release_pool";
    }
    return "unknown";
}

std::atomic<std::uint64_t> runnersCreated{0};
}  // namespace

ProgramRunner::ProgramRunner(CachingAllocator& allocator, ProgramRunnerOptions options)
    : allocator_(allocator), options_(options) {
    runnersCreated.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t ProgramRunner::created() { return runnersCreated.load(std::memory_order_relaxed); }

std::optional<std::uint64_t> ProgramRunner::addressOf(std::uint64_t id) const {
    auto it = live_.find(id);
    if (it == live_.end()) return std::nullopt;
    return it->second;
}

bool ProgramRunner::fail(ProgramResult& result, std::uint64_t opIndex, std::string message) {
    result.error = ProgramError{opIndex, "op " + std::to_string(opIndex) + ": " + std::move(message)};
    return false;
}

ProgramResult ProgramRunner::run(const Program& program) {
    ProgramResult result;
    SpillArray<Op>::Walk walk(program.ops);  // a big program's ops leave memory behind the run
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
        walk.at(i);
        if (!apply(program.ops[i], i, result)) break;
    }
    return result;
}

bool ProgramRunner::apply(const Op& op, std::uint64_t opIndex, ProgramResult& result) {
    allocator_.setOpIndex(opIndex);
    const std::string idText = "tensor id " + std::to_string(op.id);
    switch (op.kind) {
        case OpKind::Alloc: {
            if (live_.count(op.id) != 0) return fail(result, opIndex, "alloc of " + idText + ", which is still live");
            failed_.erase(op.id);
            settled_.erase(op.id);
            if (op.size == 0) {  // torch never calls the allocator for an empty tensor
                live_[op.id] = 0;
                break;
            }
            const std::optional<std::uint64_t> address = allocator_.malloc(op.size, op.stream, op.stackId);
            if (!address) {
                result.ooms.push_back(ProgramOom{opIndex, op.id, allocator_.lastOom().message});
                failed_.insert(op.id);
                ++result.opsRun;
                if (options_.stopOnOom) {
                    result.stoppedAtOom = true;
                    return false;
                }
                return true;
            }
            // The address is in use again: any stale pending record for it is over.
            if (auto stale = pendingByAddress_.find(*address); stale != pendingByAddress_.end()) {
                pending_.erase(stale->second);
                settled_.insert(stale->second);
                pendingByAddress_.erase(stale);
            }
            live_[op.id] = *address;
            break;
        }
        case OpKind::Free: {
            auto it = live_.find(op.id);
            if (it == live_.end()) {
                if (failed_.erase(op.id) != 0) break;  // its alloc failed: nothing to free
                return fail(result, opIndex, "free of unknown " + idText);
            }
            const std::uint64_t address = it->second;
            live_.erase(it);
            if (address == 0) break;
            if (!allocator_.free(address)) return fail(result, opIndex, "the allocator refused to free " + idText);
            if (allocator_.isPendingFree(address)) {
                pending_[op.id] = address;
                pendingByAddress_[address] = op.id;
            }
            break;
        }
        case OpKind::RecordStream: {
            auto it = live_.find(op.id);
            if (it == live_.end()) {
                if (failed_.count(op.id) != 0) break;
                return fail(result, opIndex, "record_stream of unknown " + idText);
            }
            if (it->second != 0) allocator_.recordStream(it->second, op.stream);
            break;
        }
        case OpKind::CompletePending: {
            auto it = pending_.find(op.id);
            if (it == pending_.end()) {
                if (failed_.count(op.id) != 0 || settled_.erase(op.id) != 0) break;
                return fail(result, opIndex, "complete_pending of " + idText + ", which has no pending free");
            }
            // A synchronising call (empty_cache, the OOM retry) may have completed it already.
            if (allocator_.isPendingFree(it->second)) allocator_.completePendingFree(it->second);
            pendingByAddress_.erase(it->second);
            pending_.erase(it);
            break;
        }
        case OpKind::Synchronize: allocator_.synchronize(); break;
        case OpKind::EmptyCache: allocator_.emptyCache(op.poolId()); break;
        case OpKind::SetMemoryFraction:
            if (!(op.fraction >= 0.0 && op.fraction <= 1.0)) {
                return fail(result, opIndex,
                            "invalid fraction:" + std::to_string(op.fraction) + ". Please set within [0, 1].");
            }
            allocator_.setMemoryFraction(op.fraction);
            break;
        case OpKind::ResetPeakStats: allocator_.resetPeakStats(); break;
        case OpKind::ResetAccumulatedStats: allocator_.resetAccumulatedStats(); break;
        case OpKind::Phase: break;
        case OpKind::CreatePool:
            if (op.poolId().isDefault()) return fail(result, opIndex, "create_pool of the default pool (0, 0)");
            allocator_.createPool(op.poolId(), PrivatePoolOptions{(op.flags & kOpUseOnOom) != 0, (op.flags & kOpNoSplit) != 0});
            break;
        case OpKind::BeginAllocateToPool: {
            if (op.poolId().isDefault()) return fail(result, opIndex, "begin_allocate_to_pool of the default pool (0, 0)");
            const std::optional<StreamId> stream =
                (op.flags & kOpAllStreams) != 0 ? std::nullopt : std::optional<StreamId>(op.stream);
            allocator_.beginAllocateToPool(op.poolId(), stream, (op.flags & kOpCapture) != 0);
            break;
        }
        case OpKind::EndAllocateToPool:
            if (!allocator_.endAllocateToPool(op.poolId())) {
                return fail(result, opIndex, "end_allocate_to_pool of a pool that is not being allocated to");
            }
            break;
        case OpKind::ReleasePool:
            if (!allocator_.releasePool(op.poolId())) {
                return fail(result, opIndex, "release_pool of a pool without owners");
            }
            break;
        default: return fail(result, opIndex, std::string("unknown op kind ") + kindName(op.kind));
    }
    ++result.opsRun;
    return true;
}

}  // namespace allocscope::alloc
