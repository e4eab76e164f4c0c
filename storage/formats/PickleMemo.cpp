#include "storage/formats/PickleMemo.h"

#include <array>
#include <stdexcept>

#include "storage/formats/MemoryColdBytes.h"

namespace allocscope::formats {

PickleMemo::PickleMemo() : ownStore_(std::make_unique<MemoryColdBytes>()), store_(ownStore_.get()) {}

void PickleMemo::useColdBytes(ColdBytes& store) {
    if (!chunks_.empty() || !sparse_.empty()) throw std::logic_error("PickleMemo::useColdBytes after values were stored");
    store_ = &store;
    ownStore_.reset();
    cold_ = store_->data();
}

void PickleMemo::appendInNewChunk(PyRef ref) {
    const uint64_t chunk = dense_ >> kChunkBits;
    if (chunk == chunks_.size()) {
        chunks_.emplace_back();
        chunks_.back().cells = std::make_unique<PyRef[]>(kChunkSlots);
        if (chunk >= kFreezeBehind) freeze(chunks_[chunk - kFreezeBehind]);
        // Old chunks a write thawed go back to the store too (the newest kFreezeBehind stay).
        std::size_t kept = 0;
        for (const std::size_t thawed : thawed_) {
            if (thawed + kFreezeBehind <= chunk) freeze(chunks_[thawed]);
            else thawed_[kept++] = thawed;
        }
        thawed_.resize(kept);
    }
    writable(dense_++) = ref;
}

void PickleMemo::put(uint64_t index, PyRef ref) {
    if (index != dense_ || !sparse_.empty()) ++rewrites_;
    if (index < dense_) {
        writable(index) = ref;
        return;
    }
    if (index == dense_) {
        append(ref);
        if (sparse_.empty()) return;
        // Pull in sparse entries that are now contiguous.
        for (auto it = sparse_.find(dense_); it != sparse_.end(); it = sparse_.find(dense_)) {
            append(it->second);
            sparse_.erase(it);
        }
        return;
    }
    sparse_[index] = ref;
}

bool PickleMemo::getSparse(uint64_t index, PyRef& out) const {
    auto it = sparse_.find(index);
    if (it == sparse_.end()) return false;
    out = it->second;
    return true;
}

PyRef* PickleMemo::slot(uint64_t index) {
    ++rewrites_;  // the caller may write through the pointer
    if (index < dense_) return &writable(index);
    auto it = sparse_.find(index);
    return it == sparse_.end() ? nullptr : &it->second;
}

PyRef& PickleMemo::writable(uint64_t index) {
    const std::size_t at = static_cast<std::size_t>(index >> kChunkBits);
    Chunk& chunk = chunks_[at];
    if (!chunk.cells) {
        thaw(chunk);
        thawed_.push_back(at);
    }
    return chunk.cells[index & kChunkMask];
}

void PickleMemo::freeze(Chunk& chunk) {
    if (!chunk.cells) return;
    // Distinct values in first-seen order. A small direct-mapped cache in front of the map: a
    // chunk's 65,536 slots repeat a handful of values, and a hash-map lookup per slot would cost
    // more than the whole rest of the freeze.
    std::unordered_map<PyRef, uint16_t> codes;
    struct Cached {
        PyRef value = 0;
        int32_t code = -1;  // -1: nothing cached in this line yet
    };
    std::array<Cached, 256> recent{};
    std::unique_ptr<uint16_t[]> wide = std::make_unique<uint16_t[]>(kChunkSlots);
    std::vector<PyRef> table;
    for (uint64_t i = 0; i < kChunkSlots; ++i) {
        const PyRef value = chunk.cells[i];
        Cached& hit = recent[(value * 2654435761u) >> 24];
        if (hit.code < 0 || hit.value != value) {
            auto [it, added] = codes.try_emplace(value, static_cast<uint16_t>(table.size()));
            if (added) table.push_back(value);
            hit = Cached{value, it->second};
        }
        wide[i] = static_cast<uint16_t>(hit.code);
    }
    const bool narrow = table.size() <= 256;
    std::unique_ptr<uint8_t[]> bytes;
    if (narrow) {
        bytes = std::make_unique<uint8_t[]>(kChunkSlots);
        for (uint64_t i = 0; i < kChunkSlots; ++i) bytes[i] = static_cast<uint8_t>(wide[i]);
    }
    // Into the store before the chunk changes: a store that throws (a full disk) leaves the chunk
    // thawed and whole. Every block is a multiple of four bytes, so each table starts aligned.
    const uint64_t tableAt = store_->append(reinterpret_cast<const uint8_t*>(table.data()), table.size() * sizeof(PyRef));
    const uint64_t codesAt = narrow ? store_->append(bytes.get(), kChunkSlots)
                                    : store_->append(reinterpret_cast<const uint8_t*>(wide.get()), kChunkSlots * sizeof(uint16_t));
    cold_ = store_->data();
    chunk.table = tableAt;
    chunk.codes = codesAt;
    chunk.distinct = static_cast<uint32_t>(table.size());
    chunk.narrow = narrow;
    chunk.cells.reset();
    // The pages of older chunks read since the last freeze may leave memory now; the ones read on
    // every entry (PyTorch's shared frame dicts) come back from the page cache at the next read.
    store_->trim();
}

void PickleMemo::thaw(Chunk& chunk) const {
    auto cells = std::make_unique<PyRef[]>(kChunkSlots);
    for (uint64_t i = 0; i < kChunkSlots; ++i) cells[i] = frozen(chunk, i);
    // Its bytes stay in the store unused (a store only grows); a later freeze appends new ones.
    chunk.cells = std::move(cells);
}

std::size_t PickleMemo::denseBytes() const {
    std::size_t bytes = 0;
    for (const Chunk& chunk : chunks_) {
        if (chunk.cells) {
            bytes += kChunkSlots * sizeof(PyRef);
        } else {
            bytes += chunk.distinct * sizeof(PyRef) + kChunkSlots * (chunk.narrow ? 1 : 2);
        }
    }
    return bytes;
}

std::size_t PickleMemo::heapBytes() const {
    std::size_t bytes = chunks_.capacity() * sizeof(Chunk) + thawed_.capacity() * sizeof(std::size_t);
    for (const Chunk& chunk : chunks_) {
        if (chunk.cells) bytes += kChunkSlots * sizeof(PyRef);
    }
    // A hash node (key, value, next pointer) and a bucket per sparse entry, about.
    bytes += sparse_.size() * (sizeof(std::pair<const uint64_t, PyRef>) + 2 * sizeof(void*));
    return bytes + store_->heapBytes();
}

}  // namespace allocscope::formats
