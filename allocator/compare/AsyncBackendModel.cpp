#include "allocator/compare/AsyncBackendModel.h"

#include "allocator/core/FormatSize.h"

namespace allocscope::alloc {

AsyncBackendModel::AsyncBackendModel(std::uint64_t totalMemory, std::uint64_t otherMemory,
                                     std::optional<double> memoryFraction, std::uint64_t releaseThreshold)
    : total_(totalMemory), other_(otherMemory), threshold_(releaseThreshold) {
    if (memoryFraction && *memoryFraction < 1.0) {
        limit_ = static_cast<std::uint64_t>(*memoryFraction * static_cast<double>(totalMemory));
    }
}

// Lowest free range that fits, else the end of the virtual range. A free range at the end is
// not extended into: fitted on the traces, growing past it matches PyTorch's reserved bytes
// better (train_gpt +1.9 % instead of -8.2 %).
std::optional<std::uint64_t> AsyncBackendModel::place(std::uint64_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < size) continue;
        const std::uint64_t offset = it->first;
        const std::uint64_t rest = it->second - size;
        free_.erase(it);
        if (rest > 0) free_[offset + size] = rest;
        return offset;
    }
    const std::uint64_t offset = end_;
    end_ = offset + size;
    return offset;
}

// Backs the granules of [offset, offset+size); with dryRun only says whether the device has
// room for the ones not backed yet.
bool AsyncBackendModel::back(std::uint64_t offset, std::uint64_t size, bool dryRun) {
    const std::uint64_t first = offset / kGranule;
    const std::uint64_t last = (offset + size - 1) / kGranule;
    if (dryRun) {
        std::uint64_t fresh = 0;
        for (std::uint64_t g = first; g <= last; ++g) fresh += backed_.count(g) == 0 ? 1 : 0;
        const std::uint64_t held = other_ + reserved();
        return held + fresh * kGranule <= total_;
    }
    for (std::uint64_t g = first; g <= last; ++g) ++backed_[g];
    return true;
}

void AsyncBackendModel::release(const Tensor& t) {
    const std::uint64_t first = t.offset / kGranule;
    const std::uint64_t last = (t.offset + t.size - 1) / kGranule;
    for (std::uint64_t g = first; g <= last; ++g) --backed_[g];
    unplace(t.offset, t.size);
}

// Returns a range to the free list, merged with its free neighbours.
void AsyncBackendModel::unplace(std::uint64_t offset, std::uint64_t size) {
    auto next = free_.lower_bound(offset);
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
            offset = prev->first;
            size += prev->second;
            free_.erase(prev);
        }
    }
    next = free_.lower_bound(offset + size);
    if (next != free_.end() && next->first == offset + size) {
        size += next->second;
        free_.erase(next);
    }
    free_[offset] = size;
}

// Releases unused granules, highest first, until reserved <= bytes.
void AsyncBackendModel::trimTo(std::uint64_t bytes, AsyncRunResult& result) {
    for (auto it = backed_.end(); it != backed_.begin() && reserved() > bytes;) {
        --it;
        if (it->second == 0) {
            it = backed_.erase(it);
            ++result.trims;
        }
    }
}

std::string AsyncBackendModel::oomMessage(std::uint64_t size) const {
    const std::uint64_t held = other_ + reserved();
    const std::uint64_t free = held >= total_ ? 0 : total_ - held;
    // No limit set: PyTorch prints its UINT64_MAX default (reference §10.5).
    const std::uint64_t limit = limit_ ? *limit_ : ~0ull;
    return "Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : " +
           formatSize(used_) + "\nRequested               : " + formatSize(size) +
           "\nDevice limit            : " + formatSize(total_) + "\nFree (according to CUDA): " + formatSize(free) +
           "\nPyTorch limit (set by user-supplied memory fraction)\n                        : " + formatSize(limit);
}

void AsyncBackendModel::record(AsyncRunResult& result, std::uint64_t opIndex) {
    if (used_ > peakUsed_) peakUsed_ = used_;
    if (reserved() > peakReserved_) {
        peakReserved_ = reserved();
        result.peakReservedOp = opIndex;
    }
}

bool AsyncBackendModel::apply(const Op& op, std::uint64_t opIndex, AsyncRunResult& result) {
    auto fail = [&](const std::string& what) {
        result.error = "op " + std::to_string(opIndex) + ": " + what + " (tensor id " + std::to_string(op.id) + ")";
        return false;
    };
    switch (op.kind) {
    case OpKind::Alloc: {
        if (live_.count(op.id) != 0) return fail("alloc of a live tensor");
        failed_.erase(op.id);
        ++result.allocFreeOps;
        if (op.size == 0) {
            live_[op.id] = Tensor{0, 0, 0};
            break;
        }
        if (limit_ && used_ + op.size > *limit_) {
            failed_.insert(op.id);
            result.ooms.push_back({opIndex, oomMessage(op.size)});
            break;
        }
        const std::uint64_t size = (op.size + kAlignment - 1) / kAlignment * kAlignment;
        const std::uint64_t offset = *place(size);
        if (!back(offset, size, true)) {
            trimTo(0, result);  // the allocator's retry: synchronise, trim the pool, try again
            if (!back(offset, size, true)) {
                unplace(offset, size);
                failed_.insert(op.id);
                result.ooms.push_back({opIndex, oomMessage(op.size)});
                break;
            }
        }
        const std::size_t before = backed_.size();
        back(offset, size, false);
        result.grows += backed_.size() - before;
        live_[op.id] = Tensor{offset, size, op.size};
        streamOf_[op.id] = op.stream;
        used_ += op.size;
        break;
    }
    case OpKind::Free: {
        auto it = live_.find(op.id);
        if (it == live_.end()) {
            // A tensor whose allocation failed is simply gone; anything else is invalid.
            if (failed_.erase(op.id) != 0) break;
            return fail("free of a tensor that is not live");
        }
        ++result.allocFreeOps;
        const Tensor t = it->second;
        live_.erase(it);
        streamOf_.erase(op.id);
        used_ -= t.requested;
        if (t.size == 0) break;
        if (recorded_.erase(op.id) != 0) {
            pending_[op.id] = t;  // cudaFreeAsync on the unifier stream, after the users' events
        } else {
            release(t);
        }
        break;
    }
    case OpKind::RecordStream: {
        auto s = streamOf_.find(op.id);
        if (s == streamOf_.end()) return fail("record_stream on a tensor that is not live");
        if (s->second != op.stream) recorded_[op.id] = true;
        break;
    }
    case OpKind::CompletePending: {
        auto it = pending_.find(op.id);
        // Not pending (any more): a synchronising op completed it, or the program's own
        // allocator completed it in an OOM retry (trace replays). Nothing to do.
        if (it == pending_.end()) break;
        release(it->second);
        pending_.erase(it);
        break;
    }
    case OpKind::Synchronize:
    case OpKind::EmptyCache:
        for (const auto& [id, t] : pending_) release(t);
        pending_.clear();
        if (op.kind == OpKind::EmptyCache) {
            trimTo(0, result);
        } else if (threshold_ != ~0ull) {
            trimTo(threshold_, result);
        }
        break;
    case OpKind::SetMemoryFraction:
        if (op.fraction >= 1.0) {
            limit_.reset();
        } else {
            limit_ = static_cast<std::uint64_t>(op.fraction * static_cast<double>(total_));
        }
        break;
    case OpKind::ResetPeakStats:
        peakUsed_ = used_;
        peakReserved_ = reserved();
        break;
    case OpKind::ResetAccumulatedStats:  // PyTorch only warns under this backend
    case OpKind::Phase:
    case OpKind::CreatePool:  // cudaMallocAsync has one pool: private pools route nowhere here
    case OpKind::BeginAllocateToPool:
    case OpKind::EndAllocateToPool:
    case OpKind::ReleasePool:
        break;
    }
    ++result.opsRun;
    record(result, opIndex);
    auto fill = [](Stat& s, std::uint64_t cur, std::uint64_t peak) {
        s.current = static_cast<std::int64_t>(cur);
        s.peak = static_cast<std::int64_t>(peak);
    };
    fill(result.stats.allocated_bytes[kAggregate], used_, peakUsed_);
    fill(result.stats.active_bytes[kAggregate], used_, peakUsed_);
    fill(result.stats.reserved_bytes[kAggregate], reserved(), peakReserved_);
    result.stats.max_split_size = 0;
    return true;
}

AsyncRunResult AsyncBackendModel::run(const Program& program) {
    AsyncRunResult result;
    result.stats.max_split_size = 0;
    SpillArray<Op>::Walk walk(program.ops);  // a big program's ops leave memory behind the run
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
        walk.at(i);
        if (!apply(program.ops[i], i, result)) break;
    }
    return result;
}

}  // namespace allocscope::alloc
