#include "app/cli/TraceProgram.h"

#include <exception>
#include <ostream>
#include <vector>

#include "allocator/replay/ProgramFromTrace.h"
#include "storage/formats/FormatError.h"
#include "storage/import/TraceImport.h"

namespace allocscope::cli {
namespace {
int badInput(VerbContext& ctx, const std::string& what, const std::string& where) {
    ctx.err << "allocscope-cli: " << what << " (" << where << ")\n";
    return kExitBadInput;
}
}  // namespace

std::optional<alloc::Program> traceProgram(VerbContext& ctx, const std::string& path,
                                           const alloc::CompareDevice& device, int& code) {
    std::vector<alloc::RecordedTrace> traces;
    try {
        traces = storage::importTraceFile(path);
    } catch (const formats::FormatError& e) {
        code = badInput(ctx, e.problem(), path + ": " + e.location());
        return std::nullopt;
    } catch (const std::exception& e) {
        code = badInput(ctx, e.what(), path);
        return std::nullopt;
    }
    if (traces.empty()) {
        code = badInput(ctx, "the trace holds no allocator events", path);
        return std::nullopt;
    }
    if (traces.size() > 1) ctx.err << "allocscope-cli: the trace has " << traces.size() << " devices; using the first\n";
    return alloc::programFromTrace(traces.front(), {device.memoryFraction, device.totalMemory, device.otherMemory});
}

}  // namespace allocscope::cli
