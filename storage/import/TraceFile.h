#pragma once
// The one way a caller reads a recorded trace file to replay or compare it (the CLI's compare,
// recommend and replay, the GUI's Compare tab, lessons on traces): detect the format, read it,
// import it as the allocator's RecordedTrace(s), and report bad input as one error that already
// says which file, so each caller only has to present it.
//
// Bad input throws formats::FormatError with
//   problem():  what is wrong ("unexpected end of the pickle", "expected 7 fields, found 3");
//   location(): the file, then the place inside it when the reader knows one:
//               "run.pickle: byte 1234", "log.csv: line 17", "run.pickle: device_traces[0][17]",
//               or just "run.pickle" (cannot open it, holds no allocator events).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/core/Op.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "allocator/replay/RecordedTrace.h"

namespace allocscope::storage {

enum class TraceFormat {
    Snapshot,  // PyTorch's torch.cuda.memory._snapshot(), pickled or as JSON
    RmmCsv,    // an RMM logging_resource_adaptor CSV
};

// How a snapshot pickle is read. Streamed: in one pass through a bounded buffer, each trace entry
// turned into the replay's compact form as it is read (SnapshotReader::readStreaming), so neither
// the file nor its value tree is ever held whole; the traces are the same as read whole (tested).
// A pickle the stream cannot follow (one referring back to an entry it already converted, which
// PyTorch never writes) is then read whole. JSON snapshots and RMM CSVs are always read whole.
enum class StreamMode {
    Auto,    // stream pickles of kStreamFromBytes and more
    Always,  // stream every pickle (tests)
    Never,   // read every file whole
};

// Told how far the read of a streamed file is, in bytes of the file; may throw to stop the read
// (the exception reaches the caller of load()).
using ReadProgress = std::function<void(std::uint64_t bytesRead, std::uint64_t totalBytes)>;

struct TraceFile {
    // Auto streams from this size on: smaller files are quicker to read whole and hold little.
    static constexpr std::uint64_t kStreamFromBytes = 16ull << 20;

    std::string path;
    TraceFormat format = TraceFormat::Snapshot;
    // One per device that has trace entries or segments, in device order; never empty.
    std::vector<alloc::RecordedTrace> traces;
    // The distinct non-empty `user_metadata` strings of a snapshot's trace entries, in the order
    // they first appear (at most kMaxMetadata): where a distributed job may say its rank (RankRule).
    std::vector<std::string> userMetadata;
    static constexpr std::size_t kMaxMetadata = 8;

    // Reads PATH (only reads it). Throws formats::FormatError as described above.
    static TraceFile read(const std::string& path);

    // read() for a caller that names the file itself (storage::importTraceFile and the session
    // import built on it): errors carry only the place inside the file, and `traces` may be empty.
    static TraceFile load(const std::string& path);
    static TraceFile load(const std::string& path, StreamMode mode, const ReadProgress& progress = {});

    // The format by content: a pickle starts with PROTO (0x80), a snapshot's JSON form with '{'
    // or '['; anything else is an RMM CSV, unless the name says snapshot (.pickle, .pkl, .json):
    // then it is an error at byte 0 rather than a confusing complaint about a CSV header.
    // `bytes` is the file's content; the error carries no path (read() adds it).
    static TraceFormat detect(const std::string& path, std::string_view bytes);

    // What a session's run records as its source kind: "snapshot" or "csv".
    const char* sourceKind() const { return format == TraceFormat::RmmCsv ? "csv" : "snapshot"; }

    // The first device's trace as a program to run under other configs (alloc::programFromTrace
    // says how). Callers that care warn when traces.size() > 1.
    alloc::Program program(const alloc::ProgramFromTraceOptions& options) const;
};

}  // namespace allocscope::storage
