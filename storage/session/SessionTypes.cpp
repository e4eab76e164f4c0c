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

const char* verdictKindName(VerdictKind kind) {
    switch (kind) {
        case VerdictKind::Unknown: return "unknown";
        case VerdictKind::Exact: return "exact";
        case VerdictKind::Diverged: return "diverged";
        case VerdictKind::WhatIf: return "what_if";
        case VerdictKind::Simulated: return "simulated";
    }
    return "unknown";
}

std::optional<VerdictKind> verdictKindFromName(std::string_view name) {
    for (VerdictKind kind : {VerdictKind::Unknown, VerdictKind::Exact, VerdictKind::Diverged, VerdictKind::WhatIf,
                             VerdictKind::Simulated}) {
        if (name == verdictKindName(kind)) return kind;
    }
    return std::nullopt;
}

}  // namespace allocscope::storage
