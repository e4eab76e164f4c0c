#include "allocator/replay/ProgramFromTrace.h"

#include "allocator/config/ConfigParser.h"
#include "allocator/replay/TraceReplayer.h"

namespace allocscope::alloc {

Program programFromTrace(const RecordedTrace& trace, const ProgramFromTraceOptions& options) {
    const ParseResult recorded = parseConfig(trace.settings.value_or(""));
    ReplayOptions replay;
    replay.config = recorded.accepted() ? recorded.config : AllocatorConfig{};
    if (replay.config.backend == Backend::CudaMallocAsync) replay.config = AllocatorConfig{};
    replay.memoryFraction = options.memoryFraction;
    replay.totalMemory = options.totalMemory;
    replay.otherMemory = options.otherMemory;
    replay.continueAfterOom = true;
    const ReplayResult replayed = TraceReplayer::replay(trace, replay);
    Program program;
    program.labels = replayed.program.labels;
    for (const Op& op : replayed.program.ops) {
        if (op.kind != OpKind::SetMemoryFraction) program.ops.push_back(op);
    }
    return program;
}

}  // namespace allocscope::alloc
