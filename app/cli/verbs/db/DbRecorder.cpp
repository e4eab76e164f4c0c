#include "app/cli/verbs/db/DbRecorder.h"

#include <exception>

#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/ProgramRecording.h"
#include "storage/session/RecordingObserver.h"
#include "storage/session/SessionError.h"
#include "storage/session/SessionWriter.h"

namespace allocscope::cli {
namespace {

storage::RunInfo infoOf(const DbRun& run, const std::string& gpu, std::uint64_t totalMemory, std::optional<double> fraction) {
    storage::RunInfo info;
    info.name = run.name;
    info.sourceKind = run.sourceKind;
    info.source = run.source;
    info.config = run.configText;
    info.gpu = gpu;
    info.totalMemory = totalMemory;
    info.memoryFraction = fraction.value_or(1.0);
    return info;
}

storage::RecordTarget targetOf(const DbRun& run, const alloc::CompareDevice& device) {
    storage::RecordTarget target;
    target.info = infoOf(run, device.name, device.totalMemory, device.memoryFraction);
    target.config = run.config;
    target.totalMemory = device.totalMemory;
    target.otherMemory = device.otherMemory;
    target.memoryFraction = device.memoryFraction;
    return target;
}

void noteNotRecorded(VerbContext& ctx, const std::string& name) {
    ctx.err << "allocscope-cli: note: '" << name << "' is not recorded: the cudaMallocAsync model keeps no segments to store\n";
}

}  // namespace

// Forwards one run to its RecordingObserver until that throws (a session that can no longer be
// written): then it keeps the error for reportRecorded and stops recording, while the comparison
// measures on, so the table is printed as without --db.
class DbRecorder::Observed final : public alloc::RunObserver {
public:
    Observed(std::string name, bool async) : name_(std::move(name)), async_(async) {}

    bool record(storage::SessionWriter& writer, const alloc::Program& program, const alloc::StackTable* stacks,
                const storage::RecordTarget& target) {
        guarded([&] {
            recording_ = std::make_unique<storage::RecordingObserver>(writer, program, stacks, target);
            runNumber_ = recording_->runNumber();
        });
        return recording_ != nullptr;
    }
    const std::string& name() const { return name_; }
    bool async() const { return async_; }
    int runNumber() const { return runNumber_; }
    const std::exception_ptr& error() const { return error_; }

    void onEvent(const alloc::Event& event) override {
        if (recording_) guarded([&] { recording_->onEvent(event); });
    }
    void beforeOp(const alloc::Op& op, std::uint64_t index) override {
        if (recording_) guarded([&] { recording_->beforeOp(op, index); });
    }
    void afterOp(const alloc::Op& op, std::uint64_t index, const alloc::CachingAllocator& allocator) override {
        if (recording_) guarded([&] { recording_->afterOp(op, index, allocator); });
    }
    void finish(const alloc::CachingAllocator& allocator, const alloc::ProgramResult& result) override {
        if (recording_) guarded([&] { recording_->finish(allocator, result); });
    }

private:
    template <typename F>
    void guarded(F&& step) {
        try {
            step();
        } catch (...) {
            error_ = std::current_exception();
            recording_.reset();  // its recorder commits what it has and marks the run interrupted
        }
    }

    std::string name_;
    bool async_;
    std::unique_ptr<storage::RecordingObserver> recording_;
    int runNumber_ = 0;
    std::exception_ptr error_;
};

DbRecorder::DbRecorder(std::string path) : path_(std::move(path)) {}

DbRecorder::~DbRecorder() = default;

bool DbRecorder::open(VerbContext& ctx, int& code) {
    if (writer_) return true;
    try {
        writer_ = std::make_shared<storage::SessionWriter>(path_);
    } catch (const storage::SessionError& e) {
        code = reportSessionError(ctx, e);
        return false;
    }
    return true;
}

int DbRecorder::recordPrograms(VerbContext& ctx, std::ostream& out, const alloc::Program& program, const alloc::StackTable* stacks,
                               const std::vector<DbRun>& runs, const alloc::CompareDevice& device) {
    std::vector<const DbRun*> native;
    for (const DbRun& run : runs) {
        if (run.config.backend == alloc::Backend::CudaMallocAsync) {
            noteNotRecorded(ctx, run.name);
        } else {
            native.push_back(&run);
        }
    }
    if (native.empty()) return kExitOk;
    int code = kExitOk;
    if (!open(ctx, code)) return code;
    // One run after the other, so that run numbers follow the order of `runs` (the table's);
    // recordProgram could run them in parallel, but then the numbers would depend on timing.
    std::vector<int> numbers;
    try {
        for (const DbRun* run : native) {
            numbers.push_back(storage::recordProgram(*writer_, program, stacks, targetOf(*run, device)).runNumber);
        }
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    } catch (const std::exception& e) {
        ctx.err << "allocscope-cli: " << e.what() << " (--db " << path_ << ")\n";
        return kExitBadInput;
    }
    // Run numbers in the order of `runs`, whatever order the threads created them in.
    for (std::size_t i = 0; i < native.size(); ++i) out << "run " << numbers[i] << ": " << native[i]->name << "\n";
    return kExitOk;
}

alloc::RunObserverFor DbRecorder::observeRuns(const alloc::Program& program, const alloc::StackTable* stacks,
                                              const alloc::CompareDevice& device,
                                              std::function<DbRun(const alloc::CompareConfig&)> describe) {
    // Called by the comparison on its own thread, in config order, before any run starts.
    return [this, &program, stacks, device, describe = std::move(describe)](std::size_t, const alloc::CompareConfig& config)
               -> alloc::RunObserver* {
        const DbRun run = describe(config);
        const bool async = run.config.backend == alloc::Backend::CudaMallocAsync;
        observed_.push_back(std::make_shared<Observed>(run.name, async));
        if (async || openError_) return nullptr;
        if (!writer_) {
            try {
                writer_ = std::make_shared<storage::SessionWriter>(path_);
            } catch (...) {
                openError_ = std::current_exception();
                return nullptr;
            }
        }
        Observed& observed = *observed_.back();
        return observed.record(*writer_, program, stacks, targetOf(run, device)) ? &observed : nullptr;
    };
}

int DbRecorder::reportRecorded(VerbContext& ctx, std::ostream& out) {
    for (const std::shared_ptr<Observed>& o : observed_) {
        if (o->async()) noteNotRecorded(ctx, o->name());
    }
    if (openError_) return reportError(ctx, openError_);
    for (const std::shared_ptr<Observed>& o : observed_) {
        if (o->error()) return reportError(ctx, o->error());
    }
    for (const std::shared_ptr<Observed>& o : observed_) {
        if (!o->async()) out << "run " << o->runNumber() << ": " << o->name() << "\n";
    }
    return kExitOk;
}

int DbRecorder::reportError(VerbContext& ctx, const std::exception_ptr& error) const {
    try {
        std::rethrow_exception(error);
    } catch (const storage::SessionError& e) {
        return reportSessionError(ctx, e);
    } catch (const std::exception& e) {
        ctx.err << "allocscope-cli: " << e.what() << " (--db " << path_ << ")\n";
    } catch (...) {
        ctx.err << "allocscope-cli: the session could not be written (--db " << path_ << ")\n";
    }
    return kExitBadInput;
}

std::optional<alloc::ReplayResult> DbRecorder::recordReplay(VerbContext& ctx, std::ostream& out, const alloc::RecordedTrace& trace,
                                                            const alloc::ReplayOptions& options, const DbRun& run,
                                                            const std::string& gpuName,
                                                            const std::optional<alloc::AllocatorConfig>& whatIfRecordedConfig,
                                                            int& code) {
    if (!open(ctx, code)) return std::nullopt;
    try {
        storage::RecordedReplay recorded = storage::recordReplay(
            *writer_, trace, options, infoOf(run, gpuName, options.totalMemory, options.memoryFraction), whatIfRecordedConfig);
        out << "run " << recorded.runNumber << ": " << run.name << "\n";
        return std::move(recorded.result);
    } catch (const storage::SessionError& e) {
        code = reportSessionError(ctx, e);
    } catch (const std::exception& e) {
        ctx.err << "allocscope-cli: " << e.what() << " (--db " << path_ << ")\n";
        code = kExitBadInput;
    }
    return std::nullopt;
}

}  // namespace allocscope::cli
