#include "allocator/core/FormatSize.h"

#include <cstdio>

namespace allocscope::alloc {

std::string formatSize(std::uint64_t size) {
    if (size <= 1024) return std::to_string(size) + " bytes";
    double value = 0;
    const char* unit = "";
    if (size <= 1048576ull) {
        value = static_cast<double>(size) / 1024.0;
        unit = " KiB";
    } else if (size <= 1073741824ull) {
        value = static_cast<double>(size) / 1048576.0;
        unit = " MiB";
    } else {
        value = static_cast<double>(size) / 1073741824.0;
        unit = " GiB";
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.2f%s", value, unit);
    return buffer;
}

}  // namespace allocscope::alloc
