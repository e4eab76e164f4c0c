#pragma once
// Exports built from a session's rows: a run (or a window [first, last] of it) as per-event CSV,
// as a PyTorch snapshot (state at `last` + the window's trace) for the pickle writer, or as an
// RMM log for the RMM CSV writer.
#include <cstdint>
#include <ostream>

#include "storage/formats/RmmLog.h"
#include "storage/formats/Snapshot.h"
#include "storage/session/SessionReader.h"

namespace allocscope::storage {

class SessionExport {
public:
    // Header + one line per event: seq, op, action, cause, pool, stream, address, size,
    // rounded size, segment, stack, and the four timeline series after the event.
    static void eventsCsv(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last, std::ostream& out);
    static formats::Snapshot snapshot(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last);
    static formats::RmmLog rmmLog(SessionReader& reader, int run, std::uint64_t first, std::uint64_t last);
};

}  // namespace allocscope::storage
