#include "allocator/core/SpillArray.h"

namespace allocscope::alloc {
namespace {

// 32 MiB: a trace of about 700,000 entries (a 60 MB snapshot) still lives in memory; the file
// is for the traces whose entries would otherwise take hundreds of megabytes.
std::atomic<std::size_t> spillFrom{32ull << 20};

}  // namespace

std::size_t spillFromBytes() { return spillFrom.load(std::memory_order_relaxed); }

void setSpillFromBytes(std::size_t bytes) { spillFrom.store(bytes, std::memory_order_relaxed); }

}  // namespace allocscope::alloc
