#include "app/cli/TraceProgram.h"

#include <exception>
#include <ostream>
#include <vector>

#include "allocator/replay/TraceReplayer.h"
#include "app/cli/DeviceOptions.h"
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
    const alloc::RecordedTrace& trace = traces.front();
    std::string error;
    const std::optional<alloc::AllocatorConfig> recorded = parseConfigOption(trace.settings.value_or(""), error);
    alloc::ReplayOptions options;
    options.config = recorded.value_or(alloc::AllocatorConfig{});
    if (options.config.backend == alloc::Backend::CudaMallocAsync) options.config = alloc::AllocatorConfig{};
    options.memoryFraction = device.memoryFraction;
    options.totalMemory = device.totalMemory;
    options.otherMemory = device.otherMemory;
    options.continueAfterOom = true;
    alloc::ReplayResult replayed = alloc::TraceReplayer::replay(trace, options);
    // The memory fraction is the comparison's, set before the first op: drop the replay's own.
    alloc::Program program;
    program.labels = replayed.program.labels;
    for (const alloc::Op& op : replayed.program.ops) {
        if (op.kind != alloc::OpKind::SetMemoryFraction) program.ops.push_back(op);
    }
    return program;
}

}  // namespace allocscope::cli
