#include "app/cli/DeviceOptions.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "allocator/config/ConfigParser.h"
#include "allocator/device/CudaProbe.h"
#include "allocator/device/GpuPresets.h"
#include "allocator/workloads/Workload.h"

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

// "cuda:N" -> N; nullopt when `text` does not name a real GPU; -1 when it does but N is bad.
std::optional<int> cudaIndexOf(const std::string& text) {
    if (text.rfind("cuda:", 0) != 0) return std::nullopt;
    const std::string digits = text.substr(5);
    if (digits.empty() || digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(digits);
}

}  // namespace

std::string ResolvedDevice::description() const {
    if (!real()) return name;
    return realName.empty() ? name : name + " (" + realName + ")";
}

const char* DeviceOptions::realGpuUsage() {
    return "  --gpu cuda:N          run on real GPU N (needs a driver): real cudaMalloc / virtual-memory\n"
           "                        calls, while a simulated GPU of the same total memory decides addresses\n"
           "  --touch, --no-touch   with --gpu cuda:N: cudaMemset every new segment so it is really\n"
           "                        backed (default --touch)\n";
}

const char* DeviceOptions::usage() {
    return "  --config STR          PYTORCH_CUDA_ALLOC_CONF to run under ('' = PyTorch's defaults)\n"
           "  --memory-fraction F   set_per_process_memory_fraction(F) before the first op (0 < F <= 1)\n"
           "  --total-memory BYTES  simulated GPU with this total memory\n"
           "  --gpu PRESET          simulated GPU preset (see `allocscope-cli gpus`; default h100-80gb)\n";
}

bool DeviceOptions::consume(const std::vector<std::string>& args, std::size_t& i, std::string& error) {
    std::optional<std::string> inlineValue;
    const std::string name = optionName(args[i], inlineValue);
    if ((name == "--touch" || name == "--no-touch") && !inlineValue) {
        touch = name == "--touch";
        ++i;
        return true;
    }
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
    const std::optional<int> cudaIndex = options.gpu ? cudaIndexOf(*options.gpu) : std::nullopt;
    if (options.touch && !cudaIndex) {
        error = std::string(*options.touch ? "--touch" : "--no-touch") + " needs a real GPU: add --gpu cuda:N";
        return std::nullopt;
    }
    if (cudaIndex) {
        if (*cudaIndex < 0) {
            error = "'" + *options.gpu + "' is not a real GPU: write cuda:N with N a device number";
            return std::nullopt;
        }
        // The probe never throws: without a driver, a GPU or CUDA support it says why.
        const alloc::CudaProbeResult probe = alloc::probeCudaDevices();
        if (probe.devices.empty()) {
            error = "no GPU: " + probe.reason;
            return std::nullopt;
        }
        const auto found = std::find_if(probe.devices.begin(), probe.devices.end(),
                                        [&](const alloc::CudaDeviceDesc& d) { return d.index == *cudaIndex; });
        if (found == probe.devices.end()) {
            error = "no GPU: " + *options.gpu + " does not exist (" + std::to_string(probe.devices.size()) + " found)";
            return std::nullopt;
        }
        device.name = "cuda:" + std::to_string(*cudaIndex);
        device.realName = found->name;
        device.totalMemory = found->totalMemory;
        // Decisions are made as on a simulated GPU of this size with the H100 preset's context:
        // the same conditions the shared traces were recorded under, so replays stay exact.
        device.otherMemory = fallback && fallback->contextMemory < found->totalMemory ? fallback->contextMemory : 0;
        device.cudaIndex = cudaIndex;
        device.touch = options.touch.value_or(true);
        return device;
    }
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
        const auto first = std::find_if(parsed.diagnostics.begin(), parsed.diagnostics.end(), [](const alloc::ConfigDiagnostic& d) {
            return d.severity == alloc::DiagnosticSeverity::Error;
        });
        error.clear();
        if (first != parsed.diagnostics.end()) {
            // Columns count from 1, as the app's config editor shows them.
            error = "at column " + std::to_string(first->offset + 1) + ", " + first->message + "; ";
        }
        error += "PyTorch 2.11 says: " +
                 (parsed.pytorchMessage.empty() ? std::string(alloc::verdictName(parsed.verdict)) : parsed.pytorchMessage);
        return std::nullopt;
    }
    return parsed.config;
}

alloc::CompareDevice simulatedTarget(const ResolvedDevice& device, const alloc::Workload* workload,
                                     const DeviceOptions& options) {
    alloc::CompareDevice target;
    if (device.defaulted) {
        const std::string name = workload != nullptr ? workload->defaultGpu() : std::string(alloc::kDefaultGpuPreset);
        const std::optional<alloc::GpuPreset> preset = alloc::findGpuPreset(name);
        if (!preset) throw std::logic_error("unknown default GPU preset " + name);
        target = alloc::CompareDevice::ofPreset(*preset);
    } else {
        target.name = device.name;
        target.totalMemory = device.totalMemory;
        target.otherMemory = device.otherMemory;
    }
    target.memoryFraction = options.memoryFraction;
    return target;
}

}  // namespace allocscope::cli
