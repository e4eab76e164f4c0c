#pragma once
// PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF, parsed exactly as PyTorch 2.11 parses it.
//
// parseConfig() answers two questions at once: what PyTorch 2.11 does with the string (the
// verdict, *how* it fails and its exact message text), and what a person needs to fix it
// (the offending token and where it is, what was expected there, the nearest valid key, a
// corrected string). PyTorch's own messages are often far from the cause (a stray `;` aborts
// `import torch` with an index assertion), so the diagnostics deliberately say more than
// PyTorch does. The verdict and message never depend on the diagnostics.
//
// Reference: reference/pytorch-allocator-2.11.md §1.3, §10, §16(c), §17.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/config/AllocatorConfig.h"

namespace allocscope::alloc {

// How PyTorch 2.11 reacts to the string.
enum class Verdict {
    Accepted,            // CUDA initialises with the config
    AbortAtImport,       // `import torch` terminates: the load-time backend scanner ran off the
                         // end of the token list (c10::Error INTERNAL ASSERT, uncatchable)
    ValueErrorAtInit,    // Python ValueError at the first CUDA use (validation failures)
    RuntimeErrorAtInit,  // Python RuntimeError at the first CUDA use (stoull/stod, internal asserts)
    // Under backend:cudaMallocAsync CUDA init reads nothing, so import and init succeed; the
    // error is raised by the first later reader of the config, e.g. the first pin_memory()
    // (observed on 2.11). PyTorch still rejects the string: accepted() is false.
    ValueErrorOnFirstUse,
    RuntimeErrorOnFirstUse,
};

// "accepted", "abort-at-import", "value-error-at-init", "runtime-error-at-init",
// "value-error-on-first-use", "runtime-error-on-first-use".
const char* verdictName(Verdict verdict);

enum class DiagnosticSeverity { Error, Warning, Note };
const char* severityName(DiagnosticSeverity severity);  // "error", "warning", "note"

// One finding about the string. Positions are byte offsets into the text given to parseConfig
// (whitespace included), so a caret line can be drawn under `length` characters at `offset`.
struct ConfigDiagnostic {
    DiagnosticSeverity severity = DiagnosticSeverity::Error;
    std::string code;        // stable id: "unknown-key", "bad-bool", "too-small", "separator", ...
    std::string message;     // our explanation (not PyTorch's text; that is pytorchMessage)
    std::string token;       // the offending token's text ("" when the problem is the end)
    std::size_t offset = 0;  // where it starts in the input
    std::size_t length = 0;  // how many characters it spans (0 = a position, e.g. end of input)
    std::string expected;    // what the grammar wanted there ("" when not applicable)
    std::string suggestion;  // nearest valid key or value ("" when none)

    bool operator==(const ConfigDiagnostic&) const = default;
};

struct ParseResult {
    Verdict verdict = Verdict::Accepted;
    // The parsed config when accepted; when rejected, the options read before the failure on top
    // of the defaults (useful to show, never to run with).
    AllocatorConfig config;
    // PyTorch's exact text: the Python exception message, or the c10::Error what() of an abort.
    // Empty when accepted.
    std::string pytorchMessage;
    // In input order; errors, then warnings and notes as they were found.
    std::vector<ConfigDiagnostic> diagnostics;
    // A string PyTorch 2.11 accepts that is most likely what was meant (canonical form when the
    // input was accepted). Empty when no sensible correction exists (e.g. an unknowable value).
    std::string correctedText;

    bool accepted() const { return verdict == Verdict::Accepted; }
    bool hasErrors() const;
    bool hasWarnings() const;
};

// Parse as PyTorch 2.11 does when the string is in the environment at `import torch` and CUDA is
// initialised: the load-time backend scan (stops at the first `backend`), then the CUDA-level
// parser, then the common parser (large_segment_size_mb in a first pass). Under
// backend:cudaMallocAsync nothing is parsed at CUDA init; the first later reader parses the
// common part, then the CUDA-level part (the *OnFirstUse verdicts). Starts from the defaults.
// Checked against torch 2.11.0+cu130 on an H100: tests/config/oracle/.
ParseResult parseConfig(std::string_view text);

// Parse as torch._C._accelerator_setAllocatorSettings(text) does at run time, on top of `current`
// (the config in force; reference §10.3): max_split_size_mb, roundup_power2_divisions and
// garbage_collection_threshold reset to their defaults unless given, max_non_split_rounding_mb to
// the large segment size; every other option keeps its current value unless given. There is no
// load-time scan, so nothing aborts: running off the end is a RuntimeError. Unknown keys are
// reported by the common parser ("... in Accelerator allocator config."), and a `backend` other
// than the one `current` was loaded with is a RuntimeError. The verdict's "AtInit" names then
// mean "raised by the setter call".
ParseResult reparseConfig(std::string_view text, const AllocatorConfig& current);

// Canonical text of a config: only options that differ from the defaults, in a fixed key order
// (backend, large_segment_size_mb, max_split_size_mb, max_non_split_rounding_mb,
// roundup_power2_divisions, garbage_collection_threshold, expandable_segments,
// release_lock_on_cudamalloc, graph_capture_record_stream_reuse, per_process_memory_fraction,
// pinned_*), roundup in single form when all 16 entries are equal and in list form otherwise.
// Empty for the default config. parseConfig(formatConfig(c)).config == c for every config
// parseConfig can produce.
std::string formatConfig(const AllocatorConfig& config);

// Every key PyTorch 2.11 accepts, in canonical order.
const std::vector<std::string_view>& knownConfigKeys();

}  // namespace allocscope::alloc
