#pragma once
// How the `blocks` and `stacks` verbs print what they found: the point of the run they looked at,
// byte counts, frames and pools, in text and in JSON.
#include <cstdint>
#include <string>

#include "allocator/core/PoolId.h"
#include "allocator/core/StackTable.h"
#include "storage/session/LiveBlocks.h"
#include "storage/session/SessionReader.h"

namespace allocscope::cli {

// "run 1 (train.pickle) at peak: event 4121 (trace entry 4121)".
std::string describePoint(storage::SessionReader& reader, int run, const storage::RunPoint& point, std::uint64_t event);
// "12.50 MiB" (two decimals; bytes below 1 KiB as "N B").
std::string bytesText(std::int64_t bytes);
// "default" or "(a,b)".
std::string poolText(const alloc::PoolId& pool);
// [{"filename": ..., "line": N|null, "name": ...}, ...] innermost first, as PyTorch lists them.
std::string framesJson(const alloc::Stack& stack);

}  // namespace allocscope::cli
