#include "storage/formats/PickleMemo.h"

#include <array>

namespace allocscope::formats {

void PickleMemo::append(PyRef ref) {
    const uint64_t chunk = dense_ >> kChunkBits;
    if (chunk == chunks_.size()) {
        chunks_.emplace_back();
        chunks_.back().cells = std::make_unique<PyRef[]>(kChunkSlots);
        if (chunk >= kFreezeBehind) freeze(chunks_[chunk - kFreezeBehind]);
    }
    writable(dense_++) = ref;
}

void PickleMemo::put(uint64_t index, PyRef ref) {
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
    if (index < dense_) return &writable(index);
    auto it = sparse_.find(index);
    return it == sparse_.end() ? nullptr : &it->second;
}

PyRef& PickleMemo::writable(uint64_t index) {
    Chunk& chunk = chunks_[index >> kChunkBits];
    if (!chunk.cells) thaw(chunk);
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
    chunk.table = std::move(table);
    if (chunk.table.size() <= 256) {
        chunk.narrow = std::make_unique<uint8_t[]>(kChunkSlots);
        for (uint64_t i = 0; i < kChunkSlots; ++i) chunk.narrow[i] = static_cast<uint8_t>(wide[i]);
    } else {
        chunk.wide = std::move(wide);
    }
    chunk.cells.reset();
}

void PickleMemo::thaw(Chunk& chunk) {
    chunk.cells = std::make_unique<PyRef[]>(kChunkSlots);
    for (uint64_t i = 0; i < kChunkSlots; ++i) chunk.cells[i] = chunk.table[chunk.narrow ? chunk.narrow[i] : chunk.wide[i]];
    chunk.table.clear();
    chunk.table.shrink_to_fit();
    chunk.narrow.reset();
    chunk.wide.reset();
}

std::size_t PickleMemo::denseBytes() const {
    std::size_t bytes = 0;
    for (const Chunk& chunk : chunks_) {
        if (chunk.cells) bytes += kChunkSlots * sizeof(PyRef);
        else bytes += chunk.table.size() * sizeof(PyRef) + kChunkSlots * (chunk.narrow ? 1 : 2);
    }
    return bytes;
}

}  // namespace allocscope::formats
