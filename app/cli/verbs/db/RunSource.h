#pragma once
// Where the `blocks` and `stacks` verbs read a run from: a session (--db S --run N, only read) or
// a trace file (a PyTorch snapshot or RMM CSV), which is imported -- replayed under its recorded
// settings, exactly as `import` does -- into a temporary session that is deleted afterwards, so a
// trace and a session answer the same questions with the same code and the same event numbers.
// For a trace, --run N picks its Nth device's run (default 1).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/DeviceOptions.h"
#include "app/cli/VerbRegistry.h"
#include "storage/session/SessionReader.h"

namespace allocscope::cli {

class RunSource {
public:
    RunSource() = default;
    RunSource(const RunSource&) = delete;
    RunSource& operator=(const RunSource&) = delete;
    ~RunSource();

    // Reads the options a source takes: TRACE, --db S, --run N, and the device options a trace's
    // import takes (--memory-fraction, --total-memory, --gpu). Returns true when args[i] was one
    // (i advanced); a bad value sets `error` (a usage error).
    bool consume(const std::vector<std::string>& args, std::size_t& i, std::string& error);
    // After parsing: "" when the options make a source, else the usage problem.
    std::string check() const;
    bool haveRun() const { return run_ > 0; }
    int runNumber() const { return run_ > 0 ? run_ : 1; }

    // Opens the session (importing the trace first). Throws SessionError / FormatError (bad input).
    storage::SessionReader& open();
    // A second run of the same source (--diff --run M).
    int checkedRun(int number);

    static const char* usage() { return "TRACE | --db SESSION --run N"; }

private:
    std::string trace_;
    std::string db_;
    int run_ = 0;
    DeviceOptions device_;
    std::string temporary_;               // the trace's temporary session, removed by the destructor
    std::vector<int> traceRuns_;          // the runs the trace's import made, one per device
    std::unique_ptr<storage::SessionReader> reader_;
};

}  // namespace allocscope::cli
