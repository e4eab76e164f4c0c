#include "allocator/core/SegmentInfo.h"

namespace allocscope::alloc {

std::string_view blockStateName(BlockState state) {
    switch (state) {
        case BlockState::ActiveAllocated: return "active_allocated";
        case BlockState::ActivePendingFree: return "active_pending_free";
        case BlockState::Inactive: return "inactive";
    }
    return "inactive";
}

}  // namespace allocscope::alloc
