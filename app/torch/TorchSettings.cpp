#include "app/torch/TorchSettings.h"

#include <charconv>
#include <cstdlib>

#include "allocator/config/ConfigParser.h"

namespace allocscope::torchabi {
namespace {

std::string environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

}  // namespace

std::string TorchSettings::parseConfigInto(const std::string& text, alloc::AllocatorConfig& config) {
    const alloc::ParseResult parsed = alloc::parseConfig(text);
    if (parsed.accepted()) {
        config = parsed.config;
        return {};
    }
    std::string out = "ALLOCSCOPE_CUDA_ALLOC_CONF='" + text + "' is refused";
    for (const alloc::ConfigDiagnostic& d : parsed.diagnostics) {
        if (d.severity != alloc::DiagnosticSeverity::Error) continue;
        out += " at column " + std::to_string(d.offset + 1);
        if (!d.token.empty()) out += " ('" + d.token + "')";
        out += ": " + d.message;
        if (!d.suggestion.empty()) out += " (did you mean '" + d.suggestion + "'?)";
        break;
    }
    if (!parsed.pytorchMessage.empty()) out += "; PyTorch 2.11 says: " + parsed.pytorchMessage;
    return out;
}

std::optional<std::uint64_t> TorchSettings::parseDevice(const std::string& text, std::string& error) {
    if (text.empty() || text == "cuda") return std::nullopt;
    const std::string prefix = "simulated:";
    std::uint64_t bytes = 0;
    if (text.rfind(prefix, 0) == 0) {
        const char* first = text.data() + prefix.size();
        const char* last = text.data() + text.size();
        const auto [end, ec] = std::from_chars(first, last, bytes);
        if (ec == std::errc() && end == last && end != first && bytes > 0) return bytes;
    }
    error = "ALLOCSCOPE_DEVICE='" + text + "' is not understood: expected 'cuda' or 'simulated:BYTES' with BYTES a positive "
            "integer (e.g. simulated:85899345920)";
    return std::nullopt;
}

TorchSettings TorchSettings::fromEnvironment() {
    TorchSettings s;
    s.configText = environment("ALLOCSCOPE_CUDA_ALLOC_CONF");
    s.error = parseConfigInto(s.configText, s.config);
    std::string deviceError;
    s.simulatedBytes = parseDevice(environment("ALLOCSCOPE_DEVICE"), deviceError);
    if (s.error.empty()) s.error = deviceError;
    if (s.error.empty() && s.config.backend == alloc::Backend::CudaMallocAsync) {
        s.error = "ALLOCSCOPE_CUDA_ALLOC_CONF='" + s.configText +
                  "': backend:cudaMallocAsync is not served by liballocscope_torch (that backend keeps no segments to "
                  "model or record); use PyTorch's own allocator for it";
    }
    s.sessionPath = environment("ALLOCSCOPE_SESSION");
    s.pythonFrames = environment("ALLOCSCOPE_PYTHON_FRAMES") == "1";
    return s;
}

}  // namespace allocscope::torchabi
