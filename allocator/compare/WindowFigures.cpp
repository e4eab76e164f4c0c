#include "allocator/compare/WindowFigures.h"

#include <algorithm>

namespace allocscope::alloc {
namespace {

std::string jsonList(const std::vector<std::string>& names) {
    std::string out = "[";
    for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ",\"" : "\"") + names[i] + "\"";
    return out + "]";
}

}  // namespace

WindowFigures::WindowFigures(std::uint64_t entries, const HistoryTruncation& truncation)
    : entries_(entries), stateOnly_(truncation.noHistory) {}

const std::vector<std::string>& WindowFigures::windowOnly() {
    static const std::vector<std::string> names = {
        "peak_allocated", "peak_reserved", "peak_reserved_op",      "at_peak", "events",
        "cuda_malloc",    "cuda_free",     "gc_releases",           "map",     "unmap",
        "retries",        "ooms",          "estimated_allocator_us"};
    return names;
}

const std::vector<std::string>& WindowFigures::wholeRun() {
    static const std::vector<std::string> names = {"final_allocated", "final_reserved", "at_end"};
    return names;
}

bool WindowFigures::isWindowOnly(std::string_view figure) {
    const std::vector<std::string>& names = windowOnly();
    return std::find(names.begin(), names.end(), figure) != names.end();
}

std::string WindowFigures::legend() const {
    const std::string what =
        stateOnly_ ? "the snapshot kept no history (a state-only recording): figures marked " +
                         std::string(kMark) + " cover only the replay from its final state"
        : entries_ == 0 ? "figures marked " + std::string(kMark) +
                              " cover only the trace entries the recording kept (its ring buffer, "
                              "_record_memory_history(max_entries=...), kept no more)"
                        : "figures marked " + std::string(kMark) + " cover only the last " +
                              std::to_string(entries_) +
                              " of the run's trace entries (the ring buffer of "
                              "_record_memory_history(max_entries=...) kept no more)";
    return "window: " + what +
           "; the whole run's peaks may be higher and its counts larger, so they cannot be "
           "compared with whole-run "
           "figures (PyTorch's memory_stats(), a recording from the start); final figures are the "
           "whole run's";
}

std::string WindowFigures::json() const {
    std::string note;
    for (char c : legend()) note += c == '"' ? std::string("\\\"") : std::string(1, c);
    return "{\"entries\":" + std::to_string(entries_) +
           ",\"state_only\":" + (stateOnly_ ? "true" : "false") +
           ",\"window_only\":" + jsonList(windowOnly()) + ",\"whole_run\":" + jsonList(wholeRun()) +
           ",\"note\":\"" + note + "\"}";
}

}  // namespace allocscope::alloc
