#pragma once
// Explains a config string: walks PyTorch's tokens with the same steps PyTorch takes
// (key, separator, value, separator), so every finding lines up with what PyTorch does, and says
// in plain words what is wrong, where, what was expected and what was probably meant. It also
// remembers, per entry, a repaired key and value so ConfigParser can offer a corrected string.
//
// Severity follows PyTorch: Error = PyTorch rejects the entry; Warning = PyTorch accepts it but
// probably not as meant; Note = background (separator typos, newer-version keys, ...).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/config/ConfigParser.h"
#include "allocator/config/ConfigTokenizer.h"

namespace allocscope::alloc {

struct LintEntry {
    std::size_t keyIndex = 0;
    std::string key;                         // as written
    std::optional<std::string> repairedKey;  // a valid key, or none
    std::optional<std::string> repairedValue;
    std::string droppedReason;  // why this entry cannot be repaired ("" when it can)
};

struct LintResult {
    std::vector<ConfigDiagnostic> diagnostics;
    std::vector<LintEntry> entries;
};

// Where the string is read: from the environment (import + CUDA init, from the defaults), or by
// the runtime setter on top of the config in force.
struct LintContext {
    bool runtime = false;
    Backend loadedBackend = Backend::Native;  // runtime only: the backend chosen at import
    bool fractionBelowOne = false;            // runtime only: a memory fraction < 1 is in force
};

class ConfigLinter {
public:
    static LintResult lint(std::string_view text, const std::vector<ConfigToken>& tokens,
                           const LintContext& context = {});
};

}  // namespace allocscope::alloc
