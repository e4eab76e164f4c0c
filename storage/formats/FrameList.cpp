#include "storage/formats/FrameList.h"

#include <utility>

namespace allocscope::formats {

FrameList::FrameList(std::vector<SnapshotFrame> frames) {
    if (!frames.empty()) list_ = std::make_shared<const std::vector<SnapshotFrame>>(std::move(frames));
}

FrameList::FrameList(std::initializer_list<SnapshotFrame> frames) : FrameList(std::vector<SnapshotFrame>(frames)) {}

const std::vector<SnapshotFrame>& FrameList::none() {
    static const std::vector<SnapshotFrame> kNone;
    return kNone;
}

}  // namespace allocscope::formats
