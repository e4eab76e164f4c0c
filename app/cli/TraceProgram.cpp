#include "app/cli/TraceProgram.h"

#include <ostream>

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
    return TraceProgram{file.program({device.memoryFraction, device.totalMemory, device.otherMemory}), file.sourceKind()};
}

}  // namespace allocscope::cli
