#pragma once
// The option table of PyTorch 2.11's allocator config: every key it accepts, what kind of value
// each takes, and which reader owns it. Also the keys people try that 2.11 does not have.
#include <optional>
#include <string_view>
#include <vector>

namespace allocscope::alloc {

enum class ConfigValueKind {
    Backend,   // native | cudaMallocAsync
    MiB,       // unsigned integer, MiB (stoull)
    Count,     // unsigned integer, no unit (stoull)
    Fraction,  // double (stod)
    Bool,      // True | False
    Roundup,   // power of 2, or a list [K:V,...,>:V]
};

struct ConfigKeySpec {
    std::string_view name;
    ConfigValueKind kind;
    bool cudaLevel;            // parsed by CUDAAllocatorConfig (else the common parser)
    bool ignoredByAsync;       // never consulted under backend:cudaMallocAsync (§10.5)
    std::string_view aliasOf;  // ROCm spelling that the CUDA build also accepts
    std::string_view expects;  // what a value looks like, for messages
};

class ConfigKeys {
public:
    // Canonical keys (no aliases) in formatConfig's order.
    static const std::vector<ConfigKeySpec>& all();
    // Canonical keys and aliases.
    static const ConfigKeySpec* find(std::string_view key);
    static bool isKnown(std::string_view key) { return find(key) != nullptr; }
    // Keys of newer PyTorch (rejected by 2.11 as unrecognized) with the reason, or nullopt.
    static std::optional<std::string_view> laterVersionNote(std::string_view key);
};

}  // namespace allocscope::alloc
