#pragma once
// Which figures of a run cover only a recorded window. A snapshot recorded with
// `_record_memory_history(max_entries=N)` keeps only the last N trace entries (a ring buffer; a
// state-only snapshot keeps none): its replay starts from the state the final segments imply
// (HistoryWindow), so a peak or a count of a run of its ops is the window's. The whole run's peak
// is at least that high and its counts at least that large, but how much more is not in the file:
// such a figure cannot be compared with one of the whole run (PyTorch's memory_stats() in a
// ground-truth JSON, a recording made from the start). What the end state shows — final
// allocated and reserved, what empty_cache() could release, the final segments — is the whole
// run's. Reports put kMark beside each window-only figure and legend() once, so that nobody reads
// a window's 4.1 GB against a whole run's 9.3 GB as the what-if's saving.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/replay/HistoryWindow.h"

namespace allocscope::alloc {

class WindowFigures {
public:
    // `entries`: the trace entries the recording kept (0: not known here, the legend then
    // names no number); `truncation`: the replay's
    // ReplayResult::truncation (set only for a history that starts mid-run).
    WindowFigures(std::uint64_t entries, const HistoryTruncation& truncation);

    static constexpr std::string_view kMark = "(window)";

    // The figures, by their names in `compare --json`, that cover only the window: peaks (and
    // where and at what state they happened), the driver-call, retry and OOM counts, the event
    // count and the allocator time estimated from the window's calls.
    static const std::vector<std::string>& windowOnly();
    // The figures of the end state, which the final segments give for the whole run.
    static const std::vector<std::string>& wholeRun();
    static bool isWindowOnly(std::string_view figure);

    std::uint64_t entries() const { return entries_; }
    bool stateOnly() const { return stateOnly_; }
    // One line, without a newline: "window: figures marked (window) cover only ...".
    std::string legend() const;
    // {"entries":N,"state_only":false,"window_only":[...],"whole_run":[...],"note":"<legend>"}
    std::string json() const;

private:
    std::uint64_t entries_ = 0;
    bool stateOnly_ = false;
};

}  // namespace allocscope::alloc
