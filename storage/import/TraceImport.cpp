#include "storage/import/TraceImport.h"

#include "storage/formats/FormatError.h"
#include "storage/import/TraceBuilder.h"
#include "storage/import/TraceFile.h"

namespace allocscope::storage {
using alloc::EventAction;
using alloc::RecordedEntry;
using alloc::RecordedTrace;

std::vector<RecordedTrace> tracesFromSnapshot(const formats::Snapshot& snapshot) {
    TraceBuilder builder;
    for (std::size_t d = 0; d < snapshot.device_traces.size(); ++d) {
        const std::vector<formats::TraceEntry>& entries = snapshot.device_traces[d];
        if (!entries.empty()) builder.reserve(d, entries.size());
        for (std::size_t i = 0; i < entries.size(); ++i) builder.onEntry(d, i, entries[i]);
    }
    return builder.finish(snapshot);
}

RecordedTrace traceFromRmmLog(const formats::RmmLog& log) {
    RecordedTrace trace;
    trace.origin = "RMM CSV";
    trace.hasSegmentEvents = false;
    trace.entries.reserve(log.records.size() * 2);
    for (const formats::RmmRecord& r : log.records) {
        RecordedEntry entry;
        entry.address = r.pointer;
        entry.size = r.size;
        entry.streamIndex = trace.streamIndex(r.stream);
        switch (r.action) {
            case formats::RmmAction::Allocate:
                entry.action = EventAction::Alloc;
                trace.entries.push_back(entry);
                break;
            case formats::RmmAction::Free:
                // RMM logs one free; PyTorch's free_requested and free_completed are adjacent for
                // every block without stream uses, which is all an RMM log can express.
                entry.action = EventAction::FreeRequested;
                trace.entries.push_back(entry);
                entry.action = EventAction::FreeCompleted;
                trace.entries.push_back(entry);
                break;
            case formats::RmmAction::AllocateFailure:
                entry.action = EventAction::Oom;
                entry.address = 0;
                trace.entries.push_back(entry);
                break;
        }
    }
    return trace;
}

}  // namespace allocscope::storage

// ---- reading a file ----------------------------------------------------------------------------

namespace allocscope::storage {

std::vector<alloc::RecordedTrace> importTraceFile(const std::string& path) {
    // One detection and one read for every caller: TraceFile (which also names the file in errors).
    return TraceFile::load(path).traces;
}

}  // namespace allocscope::storage
