#include "storage/session/RunProgress.h"

#include <string>

#include "storage/session/SessionError.h"

namespace allocscope::storage {

RunProgress RunProgress::read(SessionReader& reader, int run) {
    SqliteStatement s = reader.db().prepare(
        "SELECT r.status, (SELECT coalesce(sum(count), 0) FROM event_chunk c WHERE c.run = r.id) FROM run r WHERE r.id = ?");
    s.bind(1, static_cast<std::int64_t>(run));
    if (!s.step()) throw SessionError("no run " + std::to_string(run) + " in this session", reader.path());
    RunProgress progress;
    const std::string status = s.columnText(0);
    progress.ended = status != "recording";
    progress.complete = status == "complete";
    progress.events = static_cast<std::uint64_t>(s.columnInt(1));
    return progress;
}

}  // namespace allocscope::storage
