#pragma once
// The options every verb that runs the allocator shares: --config, --memory-fraction,
// --total-memory / --gpu (a simulated preset, or a real GPU as cuda:N), --touch / --no-touch.
// Parsing is separate from resolving so a verb can first read all its
// arguments (usage errors, exit 2) and then judge their values against its input (exit 1).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/compare/ComparisonEngine.h"
#include "allocator/config/AllocatorConfig.h"

namespace allocscope::alloc {
class Workload;
}

namespace allocscope::cli {

struct DeviceOptions {
    std::optional<std::string> config;  // --config STR ('' = PyTorch's defaults); absent = verb's default
    std::optional<double> memoryFraction;
    std::optional<std::uint64_t> totalMemory;
    std::optional<std::string> gpu;
    // Memory touching on a real GPU (--touch / --no-touch); absent = on.
    std::optional<bool> touch;

    // If args[i] is one of these options, reads it (and its value, "--opt value" or "--opt=value"),
    // advances i past it and returns true. A bad or missing value sets `error` (a usage error).
    bool consume(const std::vector<std::string>& args, std::size_t& i, std::string& error);
    // The usage lines for a verb's help text.
    static const char* usage();
    // The lines for verbs that also execute on a real GPU (run, replay).
    static const char* realGpuUsage();
};

// The GPU a verb runs on: simulated, or (--gpu cuda:N) a real one, which the allocator drives
// through CudaDevice while a simulated device of the same total memory decides the addresses.
struct ResolvedDevice {
    std::string name;               // preset name, "custom", or "cuda:N"
    std::uint64_t totalMemory = 0;
    std::uint64_t otherMemory = 0;  // CUDA context (the preset's; h100-80gb's for --total-memory and cuda:N)
    bool defaulted = false;         // neither --total-memory nor --gpu: h100-80gb (say so on stderr)
    std::optional<int> cudaIndex;   // --gpu cuda:N: the real device N
    std::string realName;           // its name as the driver reports it ("NVIDIA H100 80GB HBM3")
    bool touch = true;              // cudaMemset each new segment / mapped range (real GPU only)

    bool real() const { return cudaIndex.has_value(); }
    // What reports and recorded sessions say the run ran on: "h100-80gb", or
    // "cuda:0 (NVIDIA H100 80GB HBM3)".
    std::string description() const;
};

// nullopt + error: unknown preset, or a real GPU that cannot be used ("no GPU: ...") (bad input).
std::optional<ResolvedDevice> resolveDevice(const DeviceOptions& options, std::string& error);

// The simulated device a run, a comparison or a recommendation uses: `device`, or where neither
// --total-memory nor --gpu was given, the workload's own default GPU preset (a trace, null: the
// CLI's default preset), its CUDA context included; capped by the options' --memory-fraction.
alloc::CompareDevice simulatedTarget(const ResolvedDevice& device, const alloc::Workload* workload,
                                     const DeviceOptions& options);

// Parses a config string as PyTorch 2.11 does. nullopt + error when PyTorch would refuse it: the
// first problem in our words with its column (from 1), then PyTorch's own message ("at column
// 19, 'abc' is not an unsigned integer ...; PyTorch 2.11 says: stoull"), which alone is
// often too terse to act on. `allocscope-cli config` shows every problem.
std::optional<alloc::AllocatorConfig> parseConfigOption(const std::string& text, std::string& error);

}  // namespace allocscope::cli
