#include "app/lessons/DataDirectory.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#ifndef ALLOCSCOPE_SOURCE_RESOURCES
#define ALLOCSCOPE_SOURCE_RESOURCES ""
#endif

namespace allocscope::app {

std::string DataDirectory::locate(const std::string& what, const char* overrideVariable) {
    std::string overrideValue;
    if (overrideVariable != nullptr && *overrideVariable != '\0') {
        if (const char* env = std::getenv(overrideVariable); env != nullptr) overrideValue = env;
    }
    return locate(what, overrideValue, executablePath(), sourceResources());
}

std::string DataDirectory::locate(const std::string& what, const std::string& overrideValue,
                                  const std::string& executable, const std::string& sourceResources) {
    // An override is the user's explicit choice: taken as is, even when missing, so a typo is
    // reported instead of silently falling back to the shipped lessons.
    if (!overrideValue.empty()) return overrideValue;
    std::vector<std::filesystem::path> candidates;
    if (!executable.empty()) {
        const std::filesystem::path bin = std::filesystem::path(executable).parent_path();
        candidates.push_back((bin / ".." / "share" / "allocscope" / what).lexically_normal());
    }
    if (!sourceResources.empty()) candidates.push_back(std::filesystem::path(sourceResources) / what);
    if (candidates.empty()) return what;
    std::error_code ec;
    for (const auto& candidate : candidates) {
        if (std::filesystem::is_directory(candidate, ec)) return candidate.string();
    }
    return candidates.back().string();
}

std::string DataDirectory::executablePath() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : exe.string();
}

std::string DataDirectory::sourceResources() { return ALLOCSCOPE_SOURCE_RESOURCES; }

}  // namespace allocscope::app
