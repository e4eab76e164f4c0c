#include "app/cli/verbs/db/LiveBlockText.h"

#include <cstdio>

#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/import/FrameLine.h"

namespace allocscope::cli {

std::string describePoint(storage::SessionReader& reader, int run, const storage::RunPoint& point, std::uint64_t event) {
    std::string text = "run " + std::to_string(run) + " (" + reader.run(run).info.name + ") at " + point.text() + ": event " +
                       std::to_string(event);
    if (const std::optional<std::uint64_t> entry = storage::LiveBlocks::entryOf(reader, run, event)) {
        text += " (trace entry " + std::to_string(*entry) + ")";
    }
    return text;
}

std::string bytesText(std::int64_t bytes) {
    const std::int64_t magnitude = bytes < 0 ? -bytes : bytes;
    if (magnitude < 1024) return std::to_string(bytes) + " B";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return buf;
}

std::string poolText(const alloc::PoolId& pool) {
    if (pool.isDefault()) return "default";
    char text[48];
    std::snprintf(text, sizeof text, "(%llu,%llu)", static_cast<unsigned long long>(pool.first),
                  static_cast<unsigned long long>(pool.second));
    return text;
}

std::string framesJson(const alloc::Stack& stack) {
    std::string out = "[";
    for (std::size_t i = 0; i < stack.size(); ++i) {
        const alloc::Frame& f = stack[i];
        out += (i > 0 ? ", " : "");
        out += "{\"filename\": " + jsonString(f.filename) + ", \"line\": " +
               (storage::FrameLine::known(f.line) ? std::to_string(f.line) : std::string("null")) + ", \"name\": " + jsonString(f.name) +
               "}";
    }
    return out + "]";
}


}  // namespace allocscope::cli
