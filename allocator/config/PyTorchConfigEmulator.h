#pragma once
// Runs a config string through PyTorch 2.11's three readers, step for step, over PyTorch's own
// tokens, and says what happens: which reader fails first, with which exception and message, and
// on which token. No diagnostics here; ConfigLinter explains, this decides.
//
// Order (reference §10.1): at `import torch` the load-time backend scanner (stops at the first
// `backend`); at CUDA init the CUDA-level parser (CUDAAllocatorConfig, first touched by the
// device allocator's constructor via per_process_memory_fraction), then the common parser
// (AcceleratorAllocatorConfig: large_segment_size_mb in a first pass, everything else in a second).
#include <cstddef>
#include <string>
#include <vector>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/config/ConfigParser.h"

namespace allocscope::alloc {

// Why PyTorch failed, so the linter can match it to the token it explains.
enum class EmulatedFailure {
    None,
    IndexOutOfBounds,   // INTERNAL ASSERT "Index out of bounds in ConfigTokenizer"
    MissingBracket,     // INTERNAL ASSERT "Expected closing bracket ']' ..."
    BackendMismatch,    // INTERNAL ASSERT "Allocator backend parsed at runtime != ..."
    NotANumber,         // std::stoull / std::stod threw
    BadBool,            // "Expected 'True' or 'False' ..."
    UnknownKey,         // "Unrecognized key ..."
    InvalidValue,       // any other TORCH_CHECK_VALUE on a value
};

struct EmulationOutcome {
    Verdict verdict = Verdict::Accepted;
    EmulatedFailure failure = EmulatedFailure::None;
    std::string message;                          // PyTorch's text
    std::size_t tokenIndex = static_cast<std::size_t>(-1);  // token that failed (== size: the end)
    std::size_t keyIndex = static_cast<std::size_t>(-1);    // key being read when it failed
    AllocatorConfig config;                       // everything set before the failure
};

class PyTorchConfigEmulator {
public:
    // The string in the environment: `import torch`, then CUDA initialisation, from the defaults.
    static EmulationOutcome run(const std::vector<std::string>& tokens);
    // torch._C._accelerator_setAllocatorSettings(string) at run time (reference §10.1, §10.3): no
    // load-time scan (running off the end is a RuntimeError, never an abort); the common parser
    // runs first, after resetting max_split_size, roundup_power2_divisions and
    // garbage_collection_threshold; then the CUDA-level parser. Everything else keeps its value
    // from `current`, and `backend` must name the backend `current` was loaded with.
    static EmulationOutcome runRuntime(const std::vector<std::string>& tokens, const AllocatorConfig& current);

    // The text of c10's INTERNAL ASSERT for an index past the end of the token list, raised at
    // `line` of c10/core/AllocatorConfig.h (55: operator[], 124: checkIndex).
    static std::string indexAssertMessage(int line);
    // The prefix glibc++'s terminate handler prints for an uncaught c10::Error at import.
    static const char* abortPrefix();
    static constexpr std::uint64_t kMaxMiB = std::numeric_limits<std::uint64_t>::max() / kMiB;
    static constexpr std::uint64_t kMaxRegisterThreads = 128;
};

}  // namespace allocscope::alloc
