#include "allocator/core/Event.h"

#include <array>

namespace allocscope::alloc {
namespace {
constexpr std::array<std::string_view, kEventActionCount> kActionNames = {
    "alloc",       "free_requested", "free_completed", "segment_alloc", "segment_free",
    "segment_map", "segment_unmap",  "oom",            "snapshot"};
constexpr std::array<std::string_view, kEventCauseCount> kCauseNames = {
    "program", "gc", "oversize_release", "oom_retry", "empty_cache", "restored"};
}  // namespace

std::string_view actionName(EventAction action) {
    return kActionNames[static_cast<std::size_t>(action)];
}

std::optional<EventAction> actionFromName(std::string_view name) {
    for (std::size_t i = 0; i < kActionNames.size(); ++i) {
        if (kActionNames[i] == name) return static_cast<EventAction>(i);
    }
    return std::nullopt;
}

std::string_view causeName(EventCause cause) { return kCauseNames[static_cast<std::size_t>(cause)]; }

std::optional<EventCause> causeFromName(std::string_view name) {
    for (std::size_t i = 0; i < kCauseNames.size(); ++i) {
        if (kCauseNames[i] == name) return static_cast<EventCause>(i);
    }
    return std::nullopt;
}

std::string_view poolName(PoolKind pool) { return pool == PoolKind::Small ? "small" : "large"; }

}  // namespace allocscope::alloc
