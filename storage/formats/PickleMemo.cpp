#include "storage/formats/PickleMemo.h"

namespace allocscope::formats {

void PickleMemo::append(PyRef ref) {
    if ((dense_ >> kChunkBits) == chunks_.size()) chunks_.push_back(std::make_unique<PyRef[]>(kChunkMask + 1));
    at(dense_++) = ref;
}

void PickleMemo::put(uint64_t index, PyRef ref) {
    if (index < dense_) {
        at(index) = ref;
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
    if (index < dense_) return &at(index);
    auto it = sparse_.find(index);
    return it == sparse_.end() ? nullptr : &it->second;
}

}  // namespace allocscope::formats
