// `allocscope-cli config STR [--json]`: what PyTorch 2.11 does with a PYTORCH_CUDA_ALLOC_CONF
// string, and why. Exit 0 when PyTorch accepts it, 1 when it rejects it (or aborts), 2 on usage
// errors.
#include <ostream>
#include <sstream>
#include <string>

#include "allocator/compare/CompareReport.h"
#include "allocator/config/ConfigParser.h"
#include "app/cli/VerbRegistry.h"

namespace allocscope::cli {
namespace {

using alloc::ConfigDiagnostic;
using alloc::ParseResult;
using alloc::Verdict;

std::string verdictSentence(Verdict verdict) {
    switch (verdict) {
        case Verdict::Accepted: return "accepted";
        case Verdict::AbortAtImport: return "rejected: `import torch` aborts (uncaught c10::Error at library load)";
        case Verdict::ValueErrorAtInit: return "rejected: ValueError at CUDA initialisation (first CUDA use)";
        case Verdict::RuntimeErrorAtInit: return "rejected: RuntimeError at CUDA initialisation (first CUDA use)";
        case Verdict::ValueErrorOnFirstUse:
            return "rejected: ValueError at the first read of the config after CUDA init (e.g. the first "
                   "pin_memory()); backend:cudaMallocAsync reads nothing at init";
        case Verdict::RuntimeErrorOnFirstUse:
            return "rejected: RuntimeError at the first read of the config after CUDA init (e.g. the first "
                   "pin_memory()); backend:cudaMallocAsync reads nothing at init";
    }
    return "?";
}

// Screen columns of UTF-8 text: one per code point (continuation bytes take none).
std::size_t columns(std::string_view text) {
    std::size_t n = 0;
    for (char ch : text) {
        if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
    }
    return n;
}

// The input on one line (tabs and newlines would break the caret alignment).
std::string displayLine(std::string_view text) {
    std::string out(text);
    for (char& ch : out) {
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
    }
    return out;
}

void printCaret(std::ostream& out, std::string_view text, const ConfigDiagnostic& d) {
    const std::size_t offset = std::min(d.offset, text.size());
    const std::size_t length = std::min(d.length, text.size() - offset);
    out << "    " << displayLine(text) << "\n";
    out << "    " << std::string(columns(text.substr(0, offset)), ' ')
        << std::string(std::max<std::size_t>(1, columns(text.substr(offset, length))), '^') << "\n";
}

void printText(std::ostream& out, std::string_view text, const ParseResult& r) {
    out << "config:     " << displayLine(text) << "\n";
    if (r.accepted()) {
        const std::string canonical = alloc::formatConfig(r.config);
        out << "canonical:  " << (canonical.empty() ? "(all defaults: empty string)" : canonical) << "\n";
    } else {
        out << "canonical:  (none: PyTorch 2.11 rejects this string)\n";
    }
    out << "pytorch:    " << verdictSentence(r.verdict) << "\n";
    if (!r.accepted()) {
        std::string message = r.pytorchMessage;
        for (std::size_t pos = 0; (pos = message.find('\n', pos)) != std::string::npos; pos += 13) {
            message.insert(pos + 1, "            ");
        }
        out << "message:    " << message << "\n";
        if (!r.correctedText.empty()) out << "corrected:  " << r.correctedText << "\n";
    }
    for (const ConfigDiagnostic& d : r.diagnostics) {
        out << "\n" << alloc::severityName(d.severity) << "[" << d.code << "] at " << d.offset << ": " << d.message
            << "\n";
        printCaret(out, text, d);
        if (!d.expected.empty()) out << "  expected: " << d.expected << "\n";
        if (!d.suggestion.empty()) out << "  suggestion: " << d.suggestion << "\n";
    }
}

// One JSON escape for the whole CLI (control characters as \u00XX, UTF-8 passed through).
std::string jsonString(std::string_view s) { return alloc::CompareReport::jsonString(std::string(s)); }

void printJson(std::ostream& out, std::string_view text, const ParseResult& r) {
    out << "{\"input\":" << jsonString(text) << ",\"accepted\":" << (r.accepted() ? "true" : "false")
        << ",\"verdict\":" << jsonString(alloc::verdictName(r.verdict))
        << ",\"canonical\":" << (r.accepted() ? jsonString(alloc::formatConfig(r.config)) : "null")
        << ",\"pytorch_message\":" << jsonString(r.pytorchMessage)
        << ",\"corrected\":" << (r.correctedText.empty() && !r.accepted() ? "null" : jsonString(r.correctedText))
        << ",\"diagnostics\":[";
    for (std::size_t i = 0; i < r.diagnostics.size(); ++i) {
        const ConfigDiagnostic& d = r.diagnostics[i];
        out << (i ? "," : "") << "{\"severity\":" << jsonString(alloc::severityName(d.severity))
            << ",\"code\":" << jsonString(d.code) << ",\"message\":" << jsonString(d.message)
            << ",\"token\":" << jsonString(d.token) << ",\"offset\":" << d.offset << ",\"length\":" << d.length
            << ",\"expected\":" << jsonString(d.expected) << ",\"suggestion\":" << jsonString(d.suggestion) << "}";
    }
    out << "]}\n";
}

int runConfig(VerbContext& ctx) {
    bool json = false;
    bool optionsDone = false;
    const std::string* input = nullptr;
    for (const std::string& arg : ctx.args) {
        if (!optionsDone && arg == "--json") {
            json = true;
        } else if (!optionsDone && arg == "--") {
            optionsDone = true;
        } else if (!optionsDone && arg.size() > 1 && arg[0] == '-' && arg[1] == '-') {
            ctx.err << "allocscope-cli: config: unknown option '" << arg << "' (usage: allocscope-cli config STR [--json])\n";
            return kExitUsage;
        } else if (input == nullptr) {
            input = &arg;
        } else {
            ctx.err << "allocscope-cli: config: one config string expected, got another: '" << arg
                    << "' (quote the whole string)\n";
            return kExitUsage;
        }
    }
    if (input == nullptr) {
        ctx.err << "allocscope-cli: config: missing the config string (usage: allocscope-cli config STR [--json])\n";
        return kExitUsage;
    }
    const ParseResult result = alloc::parseConfig(*input);
    if (json) {
        printJson(ctx.out, *input, result);
    } else {
        printText(ctx.out, *input, result);
    }
    return result.accepted() ? kExitOk : kExitBadInput;
}

const VerbRegistration kRegistration{Verb{
    "config", "check a PYTORCH_CUDA_ALLOC_CONF string as PyTorch 2.11 would",
    "usage: allocscope-cli config STR [--json]\n\n"
    "Parses STR exactly as PyTorch 2.11 parses PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF and prints\n"
    "its canonical form, PyTorch's verdict (accepted, `import torch` aborts, ValueError or RuntimeError\n"
    "at CUDA initialisation) with PyTorch's exact message, and diagnostics that point at the offending\n"
    "token, say what was expected and suggest the nearest valid key and a corrected string.\n"
    "--json prints one JSON object: input, accepted, verdict, canonical, pytorch_message, corrected,\n"
    "diagnostics[] (severity, code, message, token, offset, length, expected, suggestion).\n"
    "Use `--` before a string that starts with '--'.\n\n"
    "exit status: 0 PyTorch 2.11 accepts STR; 1 it rejects it (or aborts); 2 usage error.",
    runConfig}};

}  // namespace
}  // namespace allocscope::cli
