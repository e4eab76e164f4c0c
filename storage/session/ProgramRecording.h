#pragma once
// Recording into a session, in one call: a program (a demo workload, a comparison's run) run
// through a fresh CachingAllocator on a SimulatedDevice, or a recorded trace (PyTorch snapshot,
// RMM CSV) replayed under its own settings. Both become new runs of the writer's session with
// their events, statistics, stacks and phases. The CLI verbs (`replay --db`, `import`, `demo`)
// and the GUI's background jobs call these; `run`/`compare`/`recommend --db` record the runs they
// measure through the same RecordingObserver that recordProgram uses. Nothing else builds runs
// by hand.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/DeviceStats.h"
#include "allocator/core/Op.h"
#include "allocator/core/ProgramRunner.h"
#include "allocator/core/StackTable.h"
#include "allocator/replay/MemoryLimit.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceReplayer.h"
#include "storage/session/SessionRecorder.h"
#include "storage/import/TraceFile.h"
#include "storage/session/SessionTypes.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::storage {

struct RecordTarget {
    RunInfo info;                        // name, sourceKind, source, config text, gpu, totalMemory, memoryFraction
    alloc::AllocatorConfig config;       // parsed config (native backend; async has no segments: rejected)
    std::uint64_t totalMemory = 0;       // the simulated GPU's total memory (0: info.totalMemory)
    std::uint64_t otherMemory = 0;       // memory held by other processes and the CUDA context (GpuPresets)
    std::optional<double> memoryFraction;  // set_per_process_memory_fraction before the first op
};

// std::invalid_argument unless the fraction (set_per_process_memory_fraction) is within [0, 1].
void checkMemoryFraction(const std::optional<double>& fraction);

// Called from the recording thread every few thousand ops and at the end; return false to cancel.
using RecordProgress = std::function<bool(std::uint64_t done, std::uint64_t total)>;

struct RecordedRun {
    int runNumber = 0;
    alloc::ProgramResult result;         // ops run, OOMs (with PyTorch's message), error
    alloc::DeviceStats stats;            // final memory_stats()
    bool cancelled = false;              // cancelled: the run is stored and marked interrupted
};

// Runs `program` through a fresh CachingAllocator on a SimulatedDevice and records it as a new run
// of the writer's session (stats synced after every op, stacks stored, phases stored). An OOM is
// a result, not an error (the run goes on, as ComparisonEngine does); an invalid op stops the run
// (result.error) and the run is still stored complete up to there.
// Throws std::invalid_argument for backend:cudaMallocAsync (before anything is written) and
// SessionError when the session cannot be written.
// Thread-safe for parallel calls on the same writer (the writer takes batches from many runs).
RecordedRun recordProgram(SessionWriter& writer, const alloc::Program& program, const alloc::StackTable* stacks,
                          const RecordTarget& target, const RecordProgress& progress = {});

struct ImportTarget {
    std::string gpuName = "h100-80gb";   // a GpuPresets name; only a label when totalMemory is given
    std::uint64_t totalMemory = 0;       // 0: the preset's
    std::uint64_t otherMemory = 0;       // 0: the preset's CUDA context (h100-80gb's with a custom totalMemory)
    std::optional<double> memoryFraction;
    // How the file is read (TraceFile.h): Auto streams big pickles in bounded memory.
    StreamMode streaming = StreamMode::Auto;
    // Infer each device's memory limit from its recorded OOM (alloc::LimitInference) instead of
    // replaying on the GPU above: for a caller whose user gave no device (issue 35). A trace
    // without an OOM keeps the GPU above.
    bool inferLimit = false;
};

struct ImportedRun {
    int runNumber = 0;
    std::string divergence;              // "" = the replay reproduced the recording exactly
    bool cancelled = false;              // progress returned false: stored up to there, interrupted
    std::string limit;                   // inferLimit: the limit it replayed under, and whence (MemoryLimit::describe)
};

// Reads a PyTorch snapshot (pickle/JSON) or RMM CSV, judges its recorded settings, then replays
// each device's trace under them into a new run (name: the file name, + " device N" when the
// snapshot has several; stacks and phase markers stored; the first divergence from the
// recording stored with the run). Throws formats::FormatError / SessionError /
// std::runtime_error with a clear what-and-where message; nothing is written to the session
// before the input has been read and judged. After a cancel no further device is imported.
// Progress: a streamed file reports its read (by bytes) and then its replay, as one count to 1000;
// otherwise the replay's trace entries. Cancelled while the file is read: nothing is recorded and
// no run is returned.
std::vector<ImportedRun> importTraceFile(SessionWriter& writer, const std::string& file, const ImportTarget& target,
                                         const RecordProgress& progress = {});

// One replay of `trace` recorded as a new run described by `info`: TraceReplayer::replay under
// `options` (options.sink, if set, receives every event too), or, with `whatIfRecordedConfig`, the
// what-if TraceReplayer::replayWhatIf(trace, *whatIfRecordedConfig, options). Stacks and phase
// marks are stored; the divergence from the recording (if the replay compared one) is stored and
// returned. Progress counts trace entries (estimated from events as the replay runs).
struct RecordedReplay {
    int runNumber = 0;
    alloc::ReplayResult result;  // empty when cancelled
    std::string divergence;      // "" = exact (or nothing to compare with)
    bool cancelled = false;
};
RecordedReplay recordReplay(SessionWriter& writer, const alloc::RecordedTrace& trace, const alloc::ReplayOptions& options,
                            const RunInfo& info, const std::optional<alloc::AllocatorConfig>& whatIfRecordedConfig = std::nullopt,
                            const RecordProgress& progress = {});
// recordReplay in two halves, for a caller that numbers runs before it replays them (the parallel
// import): createReplayRun creates the run now; recordReplayInto replays into it and finishes it.
std::unique_ptr<SessionRecorder> createReplayRun(SessionWriter& writer, const alloc::ReplayOptions& options, const RunInfo& info,
                                                 const RecorderOptions& recorder = {});
RecordedReplay recordReplayInto(SessionRecorder& recorder, const alloc::RecordedTrace& trace, const alloc::ReplayOptions& options,
                                const std::optional<alloc::AllocatorConfig>& whatIfRecordedConfig = std::nullopt,
                                const RecordProgress& progress = {});

// importTraceFile in two halves, for a caller that must not even create the session before the
// input is judged (the CLI's `import`): prepareImport reads and judges (same errors), and
// recordImport replays the prepared traces into the session.
struct PreparedImport {
    std::string file;
    std::vector<alloc::RecordedTrace> traces;   // one per device
    std::vector<alloc::AllocatorConfig> configs;  // each trace's recorded settings, parsed
    std::string gpuName;
    std::uint64_t totalMemory = 0;               // resolved (never 0)
    std::uint64_t otherMemory = 0;
    std::optional<double> memoryFraction;
    // The rank of a distributed job the file is (RankRule: its user_metadata, else its name).
    // A rank only the metadata shows is added to the runs' names: "file.pickle · rank 3".
    std::optional<RunRank> rank;
    // ImportTarget::inferLimit: each trace's limit (its device replaces the one above); else empty.
    std::vector<alloc::MemoryLimit> limits;
};
PreparedImport prepareImport(const std::string& file, const ImportTarget& target);
// The same, told how far the read of a streamed file is (ReadProgress may throw to stop it).
PreparedImport prepareImport(const std::string& file, const ImportTarget& target, const ReadProgress& progress);
std::vector<ImportedRun> recordImport(SessionWriter& writer, const PreparedImport& prepared,
                                      const RecordProgress& progress = {});
// recordImport for a caller that numbers runs itself (BatchImport): createImportRuns creates one
// run per device now (consecutive numbers, device order); replayImportRuns replays each device
// into its run. After a cancel the runs not yet replayed are stored empty and interrupted.
std::vector<std::unique_ptr<SessionRecorder>> createImportRuns(SessionWriter& writer, const PreparedImport& prepared);
std::vector<ImportedRun> replayImportRuns(std::vector<std::unique_ptr<SessionRecorder>>& runs, const PreparedImport& prepared,
                                          const RecordProgress& progress = {});

}  // namespace allocscope::storage
