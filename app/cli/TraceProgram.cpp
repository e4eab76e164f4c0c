#include "app/cli/TraceProgram.h"

#include <ostream>

#include "allocator/config/ConfigParser.h"
#include "allocator/replay/LimitInference.h"
#include "allocator/replay/ProgramFromTrace.h"
#include "app/cli/TraceLimit.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"

namespace allocscope::cli {
std::optional<TraceProgram> traceProgram(VerbContext& ctx, const std::string& path, alloc::CompareDevice& device,
                                         bool inferLimit, int& code) {
    storage::TraceFile file;
    try {
        file = storage::TraceFile::read(path);
    } catch (const formats::FormatError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << e.location() << ")\n";
        code = kExitBadInput;
        return std::nullopt;
    }
    if (file.traces.size() > 1) ctx.err << "allocscope-cli: the trace has " << file.traces.size() << " devices; using the first\n";
    // One way from the first device's trace to the program, whatever device it runs on: the
    // window (a history that starts mid-run) is noted alongside.
    auto made = [&](const alloc::ProgramFromTraceOptions& options, std::optional<alloc::MemoryLimit> limit) {
        std::optional<alloc::HistoryTruncation> truncation;
        TraceProgram program{alloc::programFromTrace(file.traces.front(), options, truncation), file.sourceKind(),
                             std::move(limit), std::nullopt};
        if (truncation) program.window.emplace(file.traces.front().entries.size(), *truncation);
        return program;
    };
    if (!inferLimit) return made({device.memoryFraction, device.totalMemory, device.otherMemory}, std::nullopt);
    const alloc::RecordedTrace& trace = file.traces.front();
    const alloc::ParseResult recorded = alloc::parseConfig(trace.settings.value_or(""));
    alloc::ReplayOptions base;
    base.config = recorded.accepted() ? recorded.config : alloc::AllocatorConfig{};
    const alloc::MemoryLimit limit = alloc::LimitInference::infer(
        trace, base, {device.name, device.totalMemory, device.otherMemory, device.memoryFraction});
    if (limit.source != alloc::MemoryLimit::Source::Inferred) {
        return made({device.memoryFraction, device.totalMemory, device.otherMemory}, limit);
    }
    device = compareDeviceOf(limit);
    // Room for everything the recording asked for: its OOM's request succeeds and is dropped.
    constexpr std::uint64_t kRoom = 1ull << 50;
    return made({std::nullopt, kRoom, device.otherMemory}, limit);
}

}  // namespace allocscope::cli
