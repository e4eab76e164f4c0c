#pragma once
// `--db SESSION` on the verbs that run the allocator (run, compare, recommend, replay): records
// their runs as new runs of SESSION (created if missing) and prints one "run N: NAME" line per
// recorded run. The session is opened at the first recording, after the verb judged its input.
// Built without sqlite3 (a headless GPU server), the class exists but refuses with one clear line.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/AllocatorConfig.h"
#include "allocator/core/Op.h"
#include "allocator/core/StackTable.h"
#include "allocator/replay/RecordedTrace.h"
#include "allocator/replay/TraceReplayer.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::storage {
class SessionWriter;
}

namespace allocscope::cli {

// What one recorded run is.
struct DbRun {
    std::string name;                 // "fragmentation-101 · expandable_segments:True"
    std::string sourceKind = "demo";  // demo / snapshot / csv
    std::string source;               // "fragmentation-101 (k=v,...) seed 1", or the trace path
    std::string configText;           // as the user wrote it ("" = defaults)
    alloc::AllocatorConfig config;
};

class DbRecorder {
public:
    explicit DbRecorder(std::string path);
    ~DbRecorder();  // closes the session (commits, checkpoints)
    DbRecorder(const DbRecorder&) = delete;
    DbRecorder& operator=(const DbRecorder&) = delete;

    // Records `program` once per entry of `runs`, in that order (run numbers follow it).
    // backend:cudaMallocAsync runs are skipped with a note on stderr (the model has no segments
    // to record). Returns kExitOk, or prints the one-line error and returns its code.
    int recordPrograms(VerbContext& ctx, std::ostream& out, const alloc::Program& program, const alloc::StackTable* stacks,
                       const std::vector<DbRun>& runs, const alloc::CompareDevice& device);
    // Recording while measuring (compare, recommend): every config of the comparison runs once,
    // and the run that is measured is the run that is recorded. Give the returned function to the
    // comparison as its observerFor: at the first native config it opens the session, and each
    // native config gets a recording observer whose run number follows the configs' order
    // (`describe` says what the run is); backend:cudaMallocAsync configs are measured only.
    alloc::RunObserverFor observeRuns(const alloc::Program& program, const alloc::StackTable* stacks,
                                      const alloc::CompareDevice& device,
                                      std::function<DbRun(const alloc::CompareConfig&)> describe);
    // The usual `describe` of a comparison's runs: "BASE · LABEL" (an empty label is "default",
    // recorded with the default config text ""), of `sourceKind`, from `source`.
    static std::function<DbRun(const alloc::CompareConfig&)> describeRuns(std::string base, std::string sourceKind,
                                                                         std::string source);
    // After the comparison, what recordPrograms prints: a note per cudaMallocAsync config, then
    // one "run N: NAME" line per recorded run on `out`, or the one-line error of a session that
    // could not be opened or written (the comparison's own output is complete either way).
    // Returns kExitOk or the error's code.
    int reportRecorded(VerbContext& ctx, std::ostream& out);
    // Runs the replay (a what-if when `whatIfRecordedConfig` is given) while recording it.
    // nullopt after printing the one-line error (`code` set).
    std::optional<alloc::ReplayResult> recordReplay(VerbContext& ctx, std::ostream& out, const alloc::RecordedTrace& trace,
                                                    const alloc::ReplayOptions& options, const DbRun& run,
                                                    const std::string& gpuName,
                                                    const std::optional<alloc::AllocatorConfig>& whatIfRecordedConfig,
                                                    int& code);

private:
    bool open(VerbContext& ctx, int& code);
    int reportError(VerbContext& ctx, const std::exception_ptr& error) const;

    // One config of a comparison given to observeRuns: measured only (async), or recorded.
    class Observed;

    std::string path_;
    std::shared_ptr<storage::SessionWriter> writer_;  // shared_ptr: complete only where sqlite3 is
    // Declared after writer_: the observers write through it, so they go first.
    std::vector<std::shared_ptr<Observed>> observed_;
    std::exception_ptr openError_;  // the session could not be opened for observeRuns
};

inline std::function<DbRun(const alloc::CompareConfig&)> DbRecorder::describeRuns(std::string base, std::string sourceKind,
                                                                                   std::string source) {
    return [base = std::move(base), kind = std::move(sourceKind), source = std::move(source)](const alloc::CompareConfig& c) {
        const std::string label = c.label.empty() ? "default" : c.label;
        return DbRun{base + " · " + label, kind, source, label == "default" ? std::string() : label, c.config};
    };
}

#if !ALLOCSCOPE_HAVE_STORAGE
// Without sqlite3 there are no session files: every recording is refused.
inline DbRecorder::DbRecorder(std::string path) : path_(std::move(path)) {}
inline DbRecorder::~DbRecorder() = default;
inline bool DbRecorder::open(VerbContext& ctx, int& code) {
    ctx.err << "allocscope-cli: this allocscope-cli was built without session files (no sqlite3) (--db " << path_ << ")\n";
    code = kExitBadInput;
    return false;
}
inline int DbRecorder::recordPrograms(VerbContext& ctx, std::ostream&, const alloc::Program&, const alloc::StackTable*,
                                      const std::vector<DbRun>&, const alloc::CompareDevice&) {
    int code = kExitOk;
    open(ctx, code);
    return code;
}
inline alloc::RunObserverFor DbRecorder::observeRuns(const alloc::Program&, const alloc::StackTable*,
                                                     const alloc::CompareDevice&, std::function<DbRun(const alloc::CompareConfig&)>) {
    return {};
}
inline int DbRecorder::reportRecorded(VerbContext& ctx, std::ostream&) {
    int code = kExitOk;
    open(ctx, code);
    return code;
}
inline std::optional<alloc::ReplayResult> DbRecorder::recordReplay(VerbContext& ctx, std::ostream&, const alloc::RecordedTrace&,
                                                                   const alloc::ReplayOptions&, const DbRun&, const std::string&,
                                                                   const std::optional<alloc::AllocatorConfig>&, int& code) {
    open(ctx, code);
    return std::nullopt;
}
#endif

}  // namespace allocscope::cli
