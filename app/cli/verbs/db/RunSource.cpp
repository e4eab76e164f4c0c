#include "app/cli/verbs/db/RunSource.h"

#include <atomic>
#include <chrono>
#include <filesystem>

#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::cli {
namespace {

// A fresh path in the temporary folder for one trace's session (unique per process and call).
std::string temporarySessionPath() {
    static std::atomic<unsigned> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    const std::string name = "allocscope-trace-" + std::to_string(stamp) + "-" + std::to_string(counter++) + ".allocscope";
    return (std::filesystem::temp_directory_path() / name).string();
}

}  // namespace

RunSource::~RunSource() {
    reader_.reset();
    if (temporary_.empty()) return;
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::filesystem::remove(temporary_ + suffix, ec);
}

bool RunSource::consume(const std::vector<std::string>& args, std::size_t& i, std::string& error) {
    if (device_.consume(args, i, error)) return true;
    const std::string& arg = args[i];
    if (arg == "--db") {
        if (i + 1 >= args.size()) {
            error = "--db needs a session file";
        } else {
            db_ = args[i + 1];
        }
        i += 2;
        return true;
    }
    if (arg == "--run") {
        std::uint64_t number = 0;
        if (i + 1 >= args.size() || !parseCount(args[i + 1], number) || number == 0 || number > 0x7fffffff) {
            error = "--run needs a run number (from 1)";
        } else {
            run_ = static_cast<int>(number);
        }
        i += 2;
        return true;
    }
    if (arg.empty() || arg[0] == '-') return false;
    if (!trace_.empty()) {
        error = "more than one TRACE given ('" + arg + "')";
    } else {
        trace_ = arg;
    }
    ++i;
    return true;
}

std::string RunSource::check() const {
    if (trace_.empty() && db_.empty()) return "a TRACE or --db SESSION is required";
    if (!trace_.empty() && !db_.empty()) return "give a TRACE or --db SESSION, not both";
    if (!db_.empty() && run_ == 0) return "--db SESSION needs --run N (from 1)";
    if (device_.config) return "the run is read as recorded; --config is for `replay`";
    if (!db_.empty() && (device_.memoryFraction || device_.totalMemory || device_.gpu)) {
        return "--memory-fraction, --total-memory and --gpu are for a TRACE (a session's run is read as recorded)";
    }
    return {};
}

storage::SessionReader& RunSource::open() {
    if (!db_.empty()) {
        reader_ = std::make_unique<storage::SessionReader>(db_);
        reader_->run(run_);  // SessionError when there is no such run
        return *reader_;
    }
    std::string error;
    const std::optional<ResolvedDevice> gpu = resolveDevice(device_, error);
    if (!gpu) throw storage::SessionError(error, "--gpu");
    storage::ImportTarget target;
    target.gpuName = gpu->name;
    target.totalMemory = gpu->totalMemory;
    target.otherMemory = gpu->otherMemory;
    target.memoryFraction = device_.memoryFraction;
    const storage::PreparedImport prepared = storage::prepareImport(trace_, target);  // FormatError names the file
    temporary_ = temporarySessionPath();
    {
        storage::SessionWriter writer(temporary_);
        for (const storage::ImportedRun& run : storage::recordImport(writer, prepared)) traceRuns_.push_back(run.runNumber);
    }
    const int wanted = runNumber();
    if (wanted > static_cast<int>(traceRuns_.size())) {
        throw storage::SessionError("the trace has " + std::to_string(traceRuns_.size()) + " device run(s); there is no run " +
                                        std::to_string(wanted),
                                    trace_);
    }
    run_ = traceRuns_[static_cast<std::size_t>(wanted - 1)];
    reader_ = std::make_unique<storage::SessionReader>(temporary_, false);
    return *reader_;
}

int RunSource::checkedRun(int number) {
    if (!traceRuns_.empty()) {
        if (number < 1 || number > static_cast<int>(traceRuns_.size())) {
            throw storage::SessionError("the trace has " + std::to_string(traceRuns_.size()) + " device run(s); there is no run " +
                                            std::to_string(number),
                                        trace_);
        }
        return traceRuns_[static_cast<std::size_t>(number - 1)];
    }
    reader_->run(number);
    return number;
}

}  // namespace allocscope::cli
