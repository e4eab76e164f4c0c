#include "app/cli/verbs/db/DbRecorder.h"

#include <exception>

#include "app/cli/verbs/db/DbVerbSupport.h"
#include "storage/session/ProgramRecording.h"
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

}  // namespace

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
            ctx.err << "allocscope-cli: note: '" << run.name
                    << "' is not recorded: the cudaMallocAsync model keeps no segments to store\n";
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
            storage::RecordTarget target;
            target.info = infoOf(*run, device.name, device.totalMemory, device.memoryFraction);
            target.config = run->config;
            target.totalMemory = device.totalMemory;
            target.otherMemory = device.otherMemory;
            target.memoryFraction = device.memoryFraction;
            numbers.push_back(storage::recordProgram(*writer_, program, stacks, target).runNumber);
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
