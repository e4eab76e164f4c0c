#pragma once
// The options every verb that runs the allocator shares: --config, --memory-fraction,
// --total-memory / --gpu. Parsing is separate from resolving so a verb can first read all its
// arguments (usage errors, exit 2) and then judge their values against its input (exit 1).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"

namespace allocscope::cli {

struct DeviceOptions {
    std::optional<std::string> config;  // --config STR ('' = PyTorch's defaults); absent = verb's default
    std::optional<double> memoryFraction;
    std::optional<std::uint64_t> totalMemory;
    std::optional<std::string> gpu;

    // If args[i] is one of these options, reads it (and its value, "--opt value" or "--opt=value"),
    // advances i past it and returns true. A bad or missing value sets `error` (a usage error).
    bool consume(const std::vector<std::string>& args, std::size_t& i, std::string& error);
    // The usage lines for a verb's help text.
    static const char* usage();
};

// The simulated GPU a verb runs on.
struct ResolvedDevice {
    std::string name;               // preset name, or "custom"
    std::uint64_t totalMemory = 0;
    std::uint64_t otherMemory = 0;  // CUDA context (the preset's; h100-80gb's for --total-memory)
    bool defaulted = false;         // neither --total-memory nor --gpu: h100-80gb (say so on stderr)
};

// nullopt + error: unknown preset (bad input).
std::optional<ResolvedDevice> resolveDevice(const DeviceOptions& options, std::string& error);

// Parses a config string as PyTorch 2.11 does. nullopt + error ("<PyTorch's message>") when
// PyTorch would refuse it.
std::optional<alloc::AllocatorConfig> parseConfigOption(const std::string& text, std::string& error);

}  // namespace allocscope::cli
