#include "app/cli/TraceProgram.h"

#include <ostream>

#include "allocator/replay/ProgramFromTrace.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceFile.h"

namespace allocscope::cli {
std::optional<TraceProgram> traceProgram(VerbContext& ctx, const std::string& path, const alloc::CompareDevice& device,
                                         int& code) {
    storage::TraceFile file;
    try {
        file = storage::TraceFile::read(path);
    } catch (const formats::FormatError& e) {
        ctx.err << "allocscope-cli: " << e.problem() << " (" << e.location() << ")\n";
        code = kExitBadInput;
        return std::nullopt;
    }
    if (file.traces.size() > 1) ctx.err << "allocscope-cli: the trace has " << file.traces.size() << " devices; using the first\n";
    std::optional<alloc::HistoryTruncation> truncation;
    TraceProgram made{alloc::programFromTrace(file.traces.front(), {device.memoryFraction, device.totalMemory, device.otherMemory},
                                              truncation),
                      file.sourceKind(), std::nullopt};
    if (truncation) made.window.emplace(file.traces.front().entries.size(), *truncation);
    return made;
}

}  // namespace allocscope::cli
