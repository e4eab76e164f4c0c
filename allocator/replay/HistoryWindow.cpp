#include "allocator/replay/HistoryWindow.h"

#include "allocator/config/ConfigParser.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/replay/HistoryRewind.h"

namespace allocscope::alloc {

HistoryWindow::HistoryWindow(const RecordedTrace& trace, const AllocatorConfig& fallback) {
    if (!trace.finalSegments) return;  // RMM logs, old snapshots: nothing to start from
    // Undo what the recorded allocator did, whatever config the replay runs under (a what-if).
    const ParseResult recorded = parseConfig(trace.settings.value_or(""));
    HistoryRewind rewind(trace.settings && recorded.accepted() ? recorded.config : fallback);
    if (!rewind.load(*trace.finalSegments)) {
        problem_ = rewind.problem();
        return;
    }
    SpillArray<RecordedEntry>::Walk walk(trace.entries);  // backwards: a window stays in memory
    for (std::size_t i = trace.entries.size(); i-- > 0;) {
        walk.at(i);
        if (!rewind.undo(trace.entries[i], trace.stream(trace.entries[i]))) {
            problem_ = "trace entry " + std::to_string(i) + ": " + rewind.problem();
            // A lone stray entry that does not fit the final state (undo changed nothing): start
            // from that state anyway; the replay notes the entry it cannot apply.
            if (trace.entries.size() > 1) return;
        }
    }
    trace.entries.forget(0, trace.entries.size());
    if (rewind.empty()) return;  // recorded from the start: nothing was there before
    truncated_ = true;
    initial_ = rewind.segments();
    liveBlocks_ = rewind.liveBlocks();
    liveBytes_ = rewind.liveBytes();
    // enabled="state" forces a ring buffer of one entry.
    noHistory_ = trace.entries.size() <= 1;
}

std::optional<HistoryTruncation> HistoryWindow::truncation() const {
    if (!truncated_) return std::nullopt;
    return HistoryTruncation{liveBlocks_, liveBytes_, noHistory_, 0};
}

std::vector<std::string> HistoryWindow::windowOnlyKeys() {
    std::vector<std::string> keys;
    for (const auto& [key, value] : DeviceStats{}.flatten()) {
        const bool total = key.ends_with(".allocated") || key.ends_with(".freed") || key.ends_with(".peak");
        if (total || key.starts_with("num_")) keys.push_back(key);
    }
    return keys;
}

}  // namespace allocscope::alloc
