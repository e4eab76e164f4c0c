// parseConfig(): PyTorch's verdict (PyTorchConfigEmulator) + our explanation (ConfigLinter) +
// a corrected string.
#include "allocator/config/ConfigParser.h"

#include <algorithm>

#include "allocator/config/ConfigKeys.h"
#include "allocator/config/ConfigLinter.h"
#include "allocator/config/ConfigTokenizer.h"
#include "allocator/config/PyTorchConfigEmulator.h"

namespace allocscope::alloc {
namespace {

int severityRank(DiagnosticSeverity s) {
    switch (s) {
        case DiagnosticSeverity::Error: return 0;
        case DiagnosticSeverity::Warning: return 1;
        case DiagnosticSeverity::Note: return 2;
    }
    return 3;
}

// How the string is read: from the environment, or by the runtime setter on top of `current`.
struct Reading {
    const AllocatorConfig* current = nullptr;  // null: from the environment

    EmulationOutcome emulate(const std::vector<ConfigToken>& tokens) const {
        const std::vector<std::string> texts = ConfigTokenizer::texts(tokens);
        return current ? PyTorchConfigEmulator::runRuntime(texts, *current) : PyTorchConfigEmulator::run(texts);
    }
    EmulationOutcome emulate(std::string_view text) const { return emulate(ConfigTokenizer::tokenize(text)); }
    LintContext lintContext() const {
        LintContext c;
        if (current) {
            c.runtime = true;
            c.loadedBackend = current->backend;
            c.fractionBelowOne = current->perProcessMemoryFraction && *current->perProcessMemoryFraction < 1.0;
        }
        return c;
    }
};

// `;` -> `,` and `=` -> `:`, one character for one, so offsets stay valid.
std::string withSeparatorsFixed(std::string_view text) {
    std::string out(text);
    for (char& ch : out) {
        if (ch == ';') ch = ',';
        if (ch == '=') ch = ':';
    }
    return out;
}

// What PyTorch said, pinned to the token it failed on, for when the linter had no word for it.
ConfigDiagnostic fallbackError(const EmulationOutcome& emu, const std::vector<ConfigToken>& tokens,
                               std::size_t textSize) {
    ConfigDiagnostic d;
    d.severity = DiagnosticSeverity::Error;
    d.code = "pytorch-error";
    d.message = "PyTorch 2.11 fails here: " + emu.message;
    std::size_t index = emu.tokenIndex < tokens.size() ? emu.tokenIndex : emu.keyIndex;
    if (index < tokens.size()) {
        d.token = tokens[index].text;
        d.offset = tokens[index].offset();
        d.length = tokens[index].length();
    } else {
        d.offset = textSize;
    }
    return d;
}

// The repaired entries joined again, if PyTorch accepts the result.
std::string correction(const Reading& reading, const LintResult& lint, std::vector<ConfigDiagnostic>& notes,
                       const std::vector<ConfigToken>& tokens) {
    // A key given twice keeps its first place and its last value (PyTorch: the last one wins),
    // except roundup lists, which PyTorch applies one on top of the other.
    std::vector<std::pair<std::string, std::string>> pairs;
    std::vector<const LintEntry*> dropped;
    for (const LintEntry& e : lint.entries) {
        if (!e.repairedKey || !e.repairedValue) {
            dropped.push_back(&e);
            continue;
        }
        auto same = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == *e.repairedKey; });
        if (same != pairs.end() && *e.repairedKey != "roundup_power2_divisions") {
            same->second = *e.repairedValue;
        } else {
            pairs.emplace_back(*e.repairedKey, *e.repairedValue);
        }
    }
    std::string out;
    for (const auto& [key, value] : pairs) {
        if (!out.empty()) out += ",";
        out += key + ":" + value;
    }
    if (reading.emulate(out).verdict != Verdict::Accepted) return {};
    for (const LintEntry* e : dropped) {
        ConfigDiagnostic d;
        d.severity = DiagnosticSeverity::Note;
        d.code = "dropped";
        d.token = e->key;
        d.offset = tokens[e->keyIndex].offset();
        d.length = tokens[e->keyIndex].length();
        d.message = "left out of the corrected string: " +
                    (e->droppedReason.empty() ? std::string("it cannot be repaired") : e->droppedReason);
        notes.push_back(std::move(d));
    }
    return out;
}

}  // namespace

const char* verdictName(Verdict verdict) {
    switch (verdict) {
        case Verdict::Accepted: return "accepted";
        case Verdict::AbortAtImport: return "abort-at-import";
        case Verdict::ValueErrorAtInit: return "value-error-at-init";
        case Verdict::RuntimeErrorAtInit: return "runtime-error-at-init";
        case Verdict::ValueErrorOnFirstUse: return "value-error-on-first-use";
        case Verdict::RuntimeErrorOnFirstUse: return "runtime-error-on-first-use";
    }
    return "?";
}

const char* severityName(DiagnosticSeverity severity) {
    switch (severity) {
        case DiagnosticSeverity::Error: return "error";
        case DiagnosticSeverity::Warning: return "warning";
        case DiagnosticSeverity::Note: return "note";
    }
    return "?";
}

bool ParseResult::hasErrors() const {
    return std::any_of(diagnostics.begin(), diagnostics.end(),
                       [](const ConfigDiagnostic& d) { return d.severity == DiagnosticSeverity::Error; });
}

bool ParseResult::hasWarnings() const {
    return std::any_of(diagnostics.begin(), diagnostics.end(),
                       [](const ConfigDiagnostic& d) { return d.severity == DiagnosticSeverity::Warning; });
}

const std::vector<std::string_view>& knownConfigKeys() {
    static const std::vector<std::string_view> keys = [] {
        std::vector<std::string_view> out;
        for (const ConfigKeySpec& spec : ConfigKeys::all()) out.push_back(spec.name);
        return out;
    }();
    return keys;
}

namespace {

ParseResult analyse(std::string_view text, const Reading& reading) {
    const std::vector<ConfigToken> tokens = ConfigTokenizer::tokenize(text);
    const EmulationOutcome emu = reading.emulate(tokens);

    ParseResult result;
    result.verdict = emu.verdict;
    result.pytorchMessage = emu.message;
    result.config = emu.config;

    const LintResult lint = ConfigLinter::lint(text, tokens, reading.lintContext());
    result.diagnostics = lint.diagnostics;

    // With `;` and `=` read as the separators they were meant to be, what else is wrong? Those
    // findings are notes: PyTorch never gets that far.
    const bool separatorTypos = text.find_first_of(";=") != std::string_view::npos;
    std::string fixedText;
    std::vector<ConfigToken> fixedTokens;
    LintResult fixedLint;
    if (separatorTypos) {
        fixedText = withSeparatorsFixed(text);
        fixedTokens = ConfigTokenizer::tokenize(fixedText);
        fixedLint = ConfigLinter::lint(fixedText, fixedTokens, reading.lintContext());
        for (ConfigDiagnostic d : fixedLint.diagnostics) {
            if (d.severity != DiagnosticSeverity::Error && d.code != "suggested-key-value") continue;
            if (d.code == "missing-value" || d.code == "stray-token") continue;
            d.severity = DiagnosticSeverity::Note;
            d.message = "once ';' is read as ',' and '=' as ':': " + d.message;
            result.diagnostics.push_back(std::move(d));
        }
    }

    if (result.verdict == Verdict::ValueErrorOnFirstUse || result.verdict == Verdict::RuntimeErrorOnFirstUse) {
        ConfigDiagnostic d;
        d.severity = DiagnosticSeverity::Note;
        d.code = "deferred-by-async";
        d.message = "backend:cudaMallocAsync is chosen at `import torch`, and that backend reads no allocator option "
                    "at CUDA initialisation, so import and CUDA init succeed; PyTorch raises the error only when "
                    "something first reads the config (the first pin_memory(), for one)";
        for (const ConfigToken& t : tokens) {
            if (t.text == "cudaMallocAsync") {
                d.token = t.text;
                d.offset = t.offset();
                d.length = t.length();
                break;
            }
        }
        result.diagnostics.push_back(std::move(d));
    }

    if (result.accepted()) {
        // PyTorch's word is final: anything the linter calls an error here is a surprise, not a
        // rejection.
        for (ConfigDiagnostic& d : result.diagnostics) {
            if (d.severity == DiagnosticSeverity::Error) d.severity = DiagnosticSeverity::Warning;
        }
        result.correctedText = formatConfig(result.config);
    } else {
        if (!result.hasErrors()) result.diagnostics.push_back(fallbackError(emu, tokens, text.size()));
        std::vector<ConfigDiagnostic> notes;
        result.correctedText = separatorTypos ? correction(reading, fixedLint, notes, fixedTokens)
                                              : correction(reading, lint, notes, tokens);
        for (ConfigDiagnostic& d : notes) result.diagnostics.push_back(std::move(d));
    }
    std::stable_sort(result.diagnostics.begin(), result.diagnostics.end(),
                     [](const ConfigDiagnostic& a, const ConfigDiagnostic& b) {
                         if (severityRank(a.severity) != severityRank(b.severity)) {
                             return severityRank(a.severity) < severityRank(b.severity);
                         }
                         return a.offset < b.offset;
                     });
    return result;
}

}  // namespace

ParseResult parseConfig(std::string_view text) { return analyse(text, Reading{}); }

ParseResult reparseConfig(std::string_view text, const AllocatorConfig& current) {
    return analyse(text, Reading{&current});
}

}  // namespace allocscope::alloc
