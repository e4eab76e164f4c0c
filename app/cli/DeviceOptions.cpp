#include "app/cli/DeviceOptions.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/GpuPresets.h"

namespace allocscope::cli {
namespace {

// Splits "--opt=value"; returns the option name and sets value when '=' is present.
std::string optionName(const std::string& arg, std::optional<std::string>& inlineValue) {
    const std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) return arg;
    inlineValue = arg.substr(eq + 1);
    return arg.substr(0, eq);
}

bool parseDouble(const std::string& text, double& value) {
    if (text.empty()) return false;
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text.c_str(), &end);
    return errno == 0 && end == text.c_str() + text.size() && std::isfinite(value);
}

bool parseBytes(const std::string& text, std::uint64_t& value) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return false;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0 || v == 0) return false;
    value = v;
    return true;
}

}  // namespace

const char* DeviceOptions::usage() {
    return "  --config STR          PYTORCH_CUDA_ALLOC_CONF to run under ('' = PyTorch's defaults)\n"
           "  --memory-fraction F   set_per_process_memory_fraction(F) before the first op (0 < F <= 1)\n"
           "  --total-memory BYTES  simulated GPU with this total memory\n"
           "  --gpu PRESET          simulated GPU preset (see `allocscope-cli gpus`; default h100-80gb)\n";
}

bool DeviceOptions::consume(const std::vector<std::string>& args, std::size_t& i, std::string& error) {
    std::optional<std::string> inlineValue;
    const std::string name = optionName(args[i], inlineValue);
    if (name != "--config" && name != "--memory-fraction" && name != "--total-memory" && name != "--gpu") return false;
    std::string value;
    if (inlineValue) {
        value = *inlineValue;
    } else if (i + 1 < args.size()) {
        value = args[++i];
    } else {
        error = name + " needs a value";
        ++i;
        return true;
    }
    ++i;
    if (name == "--config") {
        config = value;
    } else if (name == "--memory-fraction") {
        double f = 0;
        if (!parseDouble(value, f) || f <= 0.0 || f > 1.0) {
            error = "--memory-fraction must be a number in (0, 1], got '" + value + "'";
        } else {
            memoryFraction = f;
        }
    } else if (name == "--total-memory") {
        std::uint64_t bytes = 0;
        if (!parseBytes(value, bytes)) {
            error = "--total-memory must be a positive number of bytes, got '" + value + "'";
        } else {
            totalMemory = bytes;
        }
    } else {
        gpu = value;
    }
    if (error.empty() && totalMemory && gpu) error = "--total-memory and --gpu exclude each other";
    return true;
}

std::optional<ResolvedDevice> resolveDevice(const DeviceOptions& options, std::string& error) {
    const std::optional<alloc::GpuPreset> fallback = alloc::findGpuPreset(alloc::kDefaultGpuPreset);
    ResolvedDevice device;
    if (options.gpu) {
        const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(*options.gpu);
        if (!preset) {
            error = "unknown GPU preset '" + *options.gpu + "' (--gpu; `allocscope-cli gpus` lists them)";
            return std::nullopt;
        }
        device.name = preset->name;
        device.totalMemory = preset->totalMemory;
        device.otherMemory = preset->contextMemory;
        return device;
    }
    device.otherMemory = fallback ? fallback->contextMemory : 0;
    if (options.totalMemory) {
        device.name = "custom";
        device.totalMemory = *options.totalMemory;
        if (device.otherMemory >= device.totalMemory) device.otherMemory = 0;
        return device;
    }
    device.name = std::string(alloc::kDefaultGpuPreset);
    device.totalMemory = fallback ? fallback->totalMemory : 0;
    device.defaulted = true;
    return device;
}

std::optional<alloc::AllocatorConfig> parseConfigOption(const std::string& text, std::string& error) {
    const alloc::ParseResult parsed = alloc::parseConfig(text);
    if (!parsed.accepted()) {
        error = parsed.pytorchMessage.empty() ? std::string(alloc::verdictName(parsed.verdict)) : parsed.pytorchMessage;
        return std::nullopt;
    }
    return parsed.config;
}

}  // namespace allocscope::cli
