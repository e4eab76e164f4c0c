#include "app/cli/TruncationReport.h"

#include <map>

#include "allocator/replay/HistoryWindow.h"

namespace allocscope::cli {
namespace {

// "every .allocated, .freed and .peak, num_alloc_retries, ..." from HistoryWindow's own list, so
// the line names exactly the keys it means.
std::string windowOnlyKeys() {
    const std::vector<std::string> keys = alloc::HistoryWindow::windowOnlyKeys();
    std::map<std::string, int> suffixes;  // ".peak" -> how many keys end with it
    std::string named;
    for (const std::string& key : keys) {
        const std::size_t dot = key.rfind('.');
        if (dot != std::string::npos) {
            ++suffixes[key.substr(dot)];
        } else {
            named += ", " + key;
        }
    }
    std::string text;
    for (const auto& [suffix, count] : suffixes) {
        text += (text.empty() ? "" : ", ") + std::string("every ") + suffix + " (" + std::to_string(count) + ")";
    }
    return std::to_string(keys.size()) + " keys: " + text + named;
}

}  // namespace

std::vector<std::string> truncationReport(const alloc::ReplayResult& result) {
    if (!result.truncation) return {};
    const alloc::HistoryTruncation& t = *result.truncation;
    const std::string live = std::to_string(t.blocks) + " blocks (" + std::to_string(t.bytes) + " B)";
    std::vector<std::string> lines;
    if (t.noHistory) {
        lines.push_back("history truncated: no history recorded (a state-only snapshot); replayed from the state its "
                        "segments imply, " + live + " live");
    } else {
        lines.push_back("history truncated: " + live +
                        " were live before the first recorded entry; replayed from the state the final segments imply");
    }
    lines.push_back("counted over the recorded window only, not comparable with PyTorch's: " + windowOnlyKeys());
    return lines;
}

}  // namespace allocscope::cli
