#pragma once
// An immutable, shared list of stack frames: the `frames` of a block, segment or trace entry.
//
// Why shared: a real snapshot has a million trace entries whose stacks are a few thousand
// distinct lists (PyTorch's pickle shares the frame dicts through its memo). Copying every list
// into every entry cost ~700 MB for a 100 MB pickle; sharing makes a repeated stack cost one
// pointer. Copies are cheap (a reference count), contents never change after construction, and
// equality compares contents, so sharing stays an encoding detail and never changes meaning.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

#include "storage/formats/SnapshotFrame.h"

namespace allocscope::formats {

class FrameList {
public:
    using value_type = SnapshotFrame;
    using const_iterator = std::vector<SnapshotFrame>::const_iterator;
    using iterator = const_iterator;

    FrameList() = default;
    // Implicit on purpose: a plain vector (or a braced list) is a frame list of its own.
    FrameList(std::vector<SnapshotFrame> frames);  // NOLINT(google-explicit-constructor)
    FrameList(std::initializer_list<SnapshotFrame> frames);

    const std::vector<SnapshotFrame>& frames() const { return list_ ? *list_ : none(); }
    size_t size() const { return list_ ? list_->size() : 0; }
    bool empty() const { return size() == 0; }
    const SnapshotFrame& operator[](size_t i) const { return (*list_)[i]; }
    const SnapshotFrame& front() const { return list_->front(); }
    const SnapshotFrame& back() const { return list_->back(); }
    const_iterator begin() const { return frames().begin(); }
    const_iterator end() const { return frames().end(); }

    // The same underlying list (not merely equal contents); empty lists all share "none".
    bool sharesWith(const FrameList& other) const { return list_ == other.list_; }
    // A key that identifies the underlying list while this handle (or a copy) lives; nullptr when
    // empty. Lets a writer emit a shared list once.
    const void* identity() const { return list_.get(); }

    friend bool operator==(const FrameList& a, const FrameList& b) {
        return a.list_ == b.list_ || a.frames() == b.frames();
    }

private:
    static const std::vector<SnapshotFrame>& none();

    std::shared_ptr<const std::vector<SnapshotFrame>> list_;  // null when there are no frames
};

}  // namespace allocscope::formats
