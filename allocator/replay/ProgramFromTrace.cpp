#include "allocator/replay/ProgramFromTrace.h"

#include "allocator/config/ConfigParser.h"
#include "allocator/replay/TraceReplayer.h"

namespace allocscope::alloc {

Program programFromTrace(const RecordedTrace& trace, const ProgramFromTraceOptions& options) {
    std::optional<HistoryTruncation> truncation;
    return programFromTrace(trace, options, truncation);
}

Program programFromTrace(const RecordedTrace& trace, const ProgramFromTraceOptions& options,
                         std::optional<HistoryTruncation>& truncation) {
    const ParseResult recorded = parseConfig(trace.settings.value_or(""));
    ReplayOptions replay;
    replay.config = recorded.accepted() ? recorded.config : AllocatorConfig{};
    if (replay.config.backend == Backend::CudaMallocAsync) replay.config = AllocatorConfig{};
    replay.memoryFraction = options.memoryFraction;
    replay.totalMemory = options.totalMemory;
    replay.otherMemory = options.otherMemory;
    replay.continueAfterOom = true;
    const ReplayResult replayed = TraceReplayer::replay(trace, replay);
    truncation = replayed.truncation;
    Program program;
    program.labels = replayed.program.labels;
    const SpillArray<Op>& ops = replayed.program.ops;
    SpillArray<Op>::Walk walk(ops);  // a big trace's: read once, left behind
    for (std::size_t i = 0; i < ops.size(); ++i) {
        walk.at(i);
        if (ops[i].kind != OpKind::SetMemoryFraction) program.ops.push_back(ops[i]);
    }
    program.ops.doneWriting();
    return program;
}

}  // namespace allocscope::alloc
