#pragma once
// An address as PyTorch's snapshots and our messages write it: "0x" and lowercase hex digits.
#include <cstdint>
#include <cstdio>
#include <string>

namespace allocscope::alloc {

inline std::string hexAddress(std::uint64_t address) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
    return text;
}

}  // namespace allocscope::alloc
