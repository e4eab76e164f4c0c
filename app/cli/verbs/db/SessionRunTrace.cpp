#include "app/cli/verbs/db/SessionRunTrace.h"

#include <map>
#include <ostream>

#include "storage/session/SessionError.h"
#include "storage/session/SessionReader.h"

namespace allocscope::cli {

std::optional<alloc::RecordedTrace> sessionRunTrace(VerbContext& ctx, const std::string& session, int run, int& code) {
    try {
        storage::SessionReader reader(session);
        const storage::RunRow row = reader.run(run);
        alloc::RecordedTrace trace;
        trace.origin = "session run " + std::to_string(run);
        trace.settings = row.info.config;
        std::map<std::uint32_t, std::uint32_t> stackIds;  // the session's -> the trace's
        reader.forEachChunk(run, 0, row.eventCount, [&](std::uint64_t, const std::vector<alloc::Event>& events) {
            for (const alloc::Event& e : events) {
                if (e.cause == alloc::EventCause::Restored || e.action == alloc::EventAction::Snapshot) continue;
                alloc::RecordedEntry entry;
                entry.action = e.action;
                entry.streamIndex = trace.streamIndex(e.stream);
                entry.address = e.address;
                entry.size = e.size;
                if (e.stackId != 0) {
                    auto it = stackIds.find(e.stackId);
                    if (it == stackIds.end()) it = stackIds.emplace(e.stackId, trace.stacks.intern(reader.stack(run, e.stackId))).first;
                    entry.stackId = it->second;
                }
                trace.entries.push_back(entry);
            }
            return true;
        });
        trace.entries.doneWriting();
        return trace;
    } catch (const storage::SessionError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << e.where() << ")\n";
        code = kExitBadInput;
        return std::nullopt;
    }
}

}  // namespace allocscope::cli
