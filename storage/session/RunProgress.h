#pragma once
// How far a run's recording has got, as committed: its events, and whether its recorder ended
// it. SessionReader::run() reads a stored "recording" as interrupted, because a reader cannot
// tell a recorder that works in another process right now from one that died; a caller that
// watches the file grow (the GUI's LiveRunFollower) can, and needs the stored status for it.
// One statement, so the count and the status are of one committed state.
#include <cstdint>

#include "storage/session/SessionReader.h"

namespace allocscope::storage {

class RunProgress {
public:
    std::uint64_t events = 0;  // committed events
    bool ended = false;        // finish() or interrupt() committed ("complete" / "interrupted")
    bool complete = false;     // finish() committed

    bool operator==(const RunProgress&) const = default;

    // SessionError if the session has no such run.
    static RunProgress read(SessionReader& reader, int run);
};

}  // namespace allocscope::storage
