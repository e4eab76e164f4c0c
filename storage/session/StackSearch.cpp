#include "storage/session/StackSearch.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

#include "storage/import/FrameLine.h"
#include "storage/session/ByteCodec.h"

namespace allocscope::storage {
namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

}  // namespace

std::set<std::uint32_t> StackSearch::matching(SessionReader& reader, int run, const std::string& text) {
    std::set<std::uint32_t> out;
    const std::string needle = lower(text);
    if (needle.empty()) return out;
    // The frames whose text matches (frames are shared by every run of the session).
    std::unordered_set<std::int64_t> frames;
    SqliteStatement f = reader.db().prepare("SELECT id, filename, line, name FROM frame");
    while (f.step()) {
        const std::string label = f.columnText(3) + " (" + f.columnText(1) + ":" + FrameLine::text(f.columnInt(2)) + ")";
        if (lower(label).find(needle) != std::string::npos) frames.insert(f.columnInt(0));
    }
    if (frames.empty()) return out;
    SqliteStatement s = reader.db().prepare(
        "SELECT r.stack_id, k.frames FROM run_stack r JOIN stack_key k ON k.id = r.stack WHERE r.run = ?");
    s.bind(1, static_cast<std::int64_t>(run));
    while (s.step()) {
        ByteReader ids(s.columnBlob(1), "stack");
        while (!ids.atEnd()) {
            if (frames.count(static_cast<std::int64_t>(ids.varint()))) {
                out.insert(static_cast<std::uint32_t>(s.columnInt(0)));
                break;
            }
        }
    }
    return out;
}

}  // namespace allocscope::storage
