#pragma once
// PyTorch's format_size() (c10/cuda/CUDACachingAllocator.cpp), used by the OOM message:
// "<n> bytes" up to 1024, then KiB / MiB / GiB with two decimals.
#include <cstdint>
#include <string>

namespace allocscope::alloc {

std::string formatSize(std::uint64_t size);

}  // namespace allocscope::alloc
