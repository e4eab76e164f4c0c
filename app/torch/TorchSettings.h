#pragma once
// What liballocscope_torch takes from the environment (read once, at the library's first call):
// the allocator config, the session to record into, the device, Python frames. A value that
// cannot be used is kept as an error text naming the variable and the place in it, so the
// library refuses to allocate (config, device) instead of running with a default.
#include <cstdint>
#include <optional>
#include <string>

#include "allocator/config/AllocatorConfig.h"

namespace allocscope::torchabi {

struct TorchSettings {
    std::string configText;              // ALLOCSCOPE_CUDA_ALLOC_CONF as given ("" = defaults)
    alloc::AllocatorConfig config;       // parsed (defaults when refused; then error is set)
    std::string sessionPath;             // ALLOCSCOPE_SESSION ("" = no recording)
    std::optional<std::uint64_t> simulatedBytes;  // ALLOCSCOPE_DEVICE=simulated:BYTES
    bool pythonFrames = false;           // ALLOCSCOPE_PYTHON_FRAMES=1
    std::string error;                   // why the library must not allocate ("" = usable)

    static TorchSettings fromEnvironment();
    // ALLOCSCOPE_CUDA_ALLOC_CONF's text: the config, or the error saying what and at which column.
    static std::string parseConfigInto(const std::string& text, alloc::AllocatorConfig& config);
    // "simulated:BYTES" -> BYTES; "cuda" or "" -> nullopt; anything else: the error text.
    static std::optional<std::uint64_t> parseDevice(const std::string& text, std::string& error);
};

}  // namespace allocscope::torchabi
