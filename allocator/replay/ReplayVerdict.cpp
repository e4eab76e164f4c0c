#include "allocator/replay/ReplayVerdict.h"

namespace allocscope::alloc {

std::string replayVerdict(const ReplayResult& result, std::size_t entries) {
    if (result.exact()) return "exact";
    if (result.divergence) {
        return "diverged at trace entry " + std::to_string(result.divergence->entryIndex) + ": " + result.divergence->what;
    }
    if (result.unexpectedOomOp) {
        return "diverged at op " + std::to_string(*result.unexpectedOomOp) + ": the program would have raised (" +
               result.unexpectedOomMessage.substr(0, result.unexpectedOomMessage.find('\n')) + ")";
    }
    // Every step matched; only the state after the last entry differs from the snapshot's segments.
    return "diverged at trace entry " + std::to_string(entries) + " (the final segments): " + *result.layoutDifference;
}

std::optional<std::size_t> replayVerdictEntry(const ReplayResult& result, std::size_t entries) {
    if (result.exact()) return std::nullopt;
    if (result.divergence) return result.divergence->entryIndex;
    if (result.unexpectedOomOp) return std::nullopt;
    return entries;
}

}  // namespace allocscope::alloc
