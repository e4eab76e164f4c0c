#include "storage/session/SessionTypes.h"

namespace allocscope::storage {

const char* runStatusName(RunStatus status) {
    switch (status) {
        case RunStatus::Complete: return "complete";
        case RunStatus::Interrupted: return "interrupted";
        case RunStatus::Recording: return "recording";
    }
    return "complete";
}

}  // namespace allocscope::storage
