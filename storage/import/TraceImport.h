#pragma once
// Turns what the readers produced (a PyTorch snapshot, an RMM log) into the allocator's
// RecordedTrace, the input of TraceReplayer. This is the only place that knows both the file
// data model (storage/formats) and the allocator's vocabulary.
//
// Bad input (an unknown action, a block state PyTorch never writes, an entry without the address
// its action needs) throws formats::FormatError naming the entry: "device_traces[0][17]".
#include <string>
#include <vector>

#include "allocator/replay/RecordedTrace.h"
#include "storage/formats/RmmLog.h"
#include "storage/formats/Snapshot.h"

namespace allocscope::storage {

// One RecordedTrace per device that has trace entries or segments, in device order. The
// device's `segments` become finalSegments (segment_pool_id becomes poolId);
// allocator_settings.PYTORCH_CUDA_ALLOC_CONF becomes `settings`; external_annotations of that
// device become phase marks placed by time. An unknown frame line becomes FrameLine::kUnknown,
// an unknown time_us 0 ("no usable clock").
std::vector<alloc::RecordedTrace> tracesFromSnapshot(const formats::Snapshot& snapshot);

// An RMM log: allocate -> alloc, free -> free_requested + free_completed, allocate failure ->
// oom. No segment events and no settings (the replay then uses PyTorch's defaults).
alloc::RecordedTrace traceFromRmmLog(const formats::RmmLog& log);

// TraceFile::load(path).traces: a snapshot (pickle or JSON) or an RMM CSV, detected as
// TraceFile::detect says. Throws formats::FormatError located inside the file (the caller names
// the file); callers that want the file named for them use TraceFile::read.
std::vector<alloc::RecordedTrace> importTraceFile(const std::string& path);

}  // namespace allocscope::storage
