#include "allocator/config/ConfigLinter.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <map>

#include "allocator/config/ConfigKeys.h"
#include "allocator/config/ConfigNumber.h"
#include "allocator/config/KeySuggester.h"
#include "allocator/config/PyTorchConfigEmulator.h"

namespace allocscope::alloc {
namespace {

using Sev = DiagnosticSeverity;

std::vector<std::string_view> canonicalKeyNames() {
    std::vector<std::string_view> names;
    for (const ConfigKeySpec& spec : ConfigKeys::all()) names.push_back(spec.name);
    return names;
}

// ';' -> ',' and '=' -> ':', what the writer most likely meant.
std::string withSeparators(std::string s) {
    for (char& ch : s) {
        if (ch == ';') ch = ',';
        if (ch == '=') ch = ':';
    }
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

class Linter {
public:
    Linter(std::string_view text, const std::vector<ConfigToken>& tokens, const LintContext& context)
        : text_(text), tokens_(tokens), runtime_(context.runtime) {
        if (runtime_) {
            firstBackend_ = context.loadedBackend == Backend::CudaMallocAsync ? "cudaMallocAsync" : "native";
            asyncBackend_ = context.loadedBackend == Backend::CudaMallocAsync;
            fractionBelowOne_ = context.fractionBelowOne;
        }
    }

    LintResult run() {
        scanSeparatorTypos();
        largeMiB_ = firstPassLargeSegmentMiB();
        std::size_t i = 0;
        while (i < tokens_.size()) i = entry(i);
        crossEntryWarnings();
        return std::move(result_);
    }

private:
    // ---- where things are -------------------------------------------------------------------
    ConfigDiagnostic at(Sev sev, std::string code, std::size_t tokenIndex, std::string message) const {
        ConfigDiagnostic d;
        d.severity = sev;
        d.code = std::move(code);
        d.message = std::move(message);
        if (tokenIndex < tokens_.size()) {
            d.token = tokens_[tokenIndex].text;
            d.offset = tokens_[tokenIndex].offset();
            d.length = tokens_[tokenIndex].length();
        } else {
            d.offset = text_.size();
            d.length = 0;
        }
        return d;
    }
    void add(ConfigDiagnostic d) { result_.diagnostics.push_back(std::move(d)); }
    const std::string& tok(std::size_t i) const { return tokens_[i].text; }

    // `;` and `=` are not separators: they end up inside tokens. Say so once per character.
    void scanSeparatorTypos() {
        for (std::size_t t = 0; t < tokens_.size(); ++t) {
            const ConfigToken& token = tokens_[t];
            for (std::size_t c = 0; c < token.text.size(); ++c) {
                const char ch = token.text[c];
                if (ch != ';' && ch != '=') continue;
                ConfigDiagnostic d;
                d.severity = Sev::Note;
                d.code = ch == ';' ? "semicolon-separator" : "equals-separator";
                d.token = std::string(1, ch);
                d.offset = token.sourceOffsets[c];
                d.length = 1;
                d.expected = ch == ';' ? "','" : "':'";
                // The whole string with every ';' and '=' replaced: what was most likely meant.
                d.suggestion = withSeparators(std::string(text_));
                d.message = std::string("'") + ch + "' is not a separator in PYTORCH_CUDA_ALLOC_CONF: it stays part of "
                            "the token '" + token.text + "'; entries are separated by ',' and keys from values by "
                            "':', so this was probably meant as '" + d.suggestion + "'";
                add(std::move(d));
            }
        }
    }

    // PyTorch's first pass: the last valid large_segment_size_mb anywhere sets the lower bounds.
    std::uint64_t firstPassLargeSegmentMiB() const {
        std::uint64_t mib = 20;
        for (std::size_t i = 0; i + 2 < tokens_.size(); ++i) {
            if (tok(i) != "large_segment_size_mb") continue;
            const ConfigNumber n = ConfigNumber::stoull(tok(i + 2));
            if (n.ok() && n.integer > 10) mib = std::min(n.integer, PyTorchConfigEmulator::kMaxMiB);
        }
        return mib;
    }

    // ---- one key:value entry, stepping exactly as PyTorch's parsers do ------------------------
    std::size_t entry(std::size_t i) {
        LintEntry e;
        e.keyIndex = i;
        e.key = tok(i);
        const ConfigKeySpec* spec = ConfigKeys::find(e.key);
        const std::size_t n = tokens_.size();
        if ((i + 1 >= n || i + 2 >= n) && runtime_ && !spec) {
            // The runtime setter's common parser rejects the unknown name before it looks further.
            checkKey(e, spec);
            if (e.droppedReason.empty()) e.droppedReason = "it has no value";
            e.repairedKey.reset();
            result_.entries.push_back(std::move(e));
            return n;
        }
        if (i + 1 >= n || i + 2 >= n) {
            // PyTorch aborts on the missing value before it ever looks at the key's name.
            const bool typo = e.key.find_first_of("=;") != std::string::npos;
            ConfigDiagnostic d = at(Sev::Error, "missing-value", i,
                                    (tokens_[i].isPunct() ? "a stray '" + e.key + "' at the end"
                                     : typo ? "'" + e.key + "' is one token with no value ('=' and ';' are not separators)"
                                            : "'" + e.key + "' has no value") +
                                        std::string(": PyTorch reads past the end of the token list "
                                                    "(INTERNAL ASSERT \"Index out of bounds in ConfigTokenizer\")") +
                                        whereItFails());
            d.expected = spec ? "':' and " + std::string(spec->expects) : "':' and a value";
            if (typo) d.suggestion = withSeparators(e.key);
            add(std::move(d));
            e.droppedReason = "it has no value";
            result_.entries.push_back(std::move(e));
            return n;
        }
        checkKey(e, spec);
        if (tok(i + 1) != ":") {
            ConfigDiagnostic d = at(Sev::Warning, "separator", i + 1,
                                    "'" + tok(i + 1) + "' where ':' belongs: PyTorch does not check separators, "
                                    "so '" + tok(i + 2) + "' is still read as the value of '" + e.key + "'");
            d.expected = "':'";
            d.suggestion = ":";
            add(std::move(d));
        }
        std::size_t end = i + 2;
        if (tok(i + 2) == "[") {
            end = i + 2;
            while (end < n && tok(end) != "]") ++end;
            if (end >= n) {
                ConfigDiagnostic d = at(Sev::Error, "missing-bracket", i + 2,
                                        "the list of '" + e.key + "' has no closing ']': PyTorch runs off the end "
                                        "looking for it (INTERNAL ASSERT \"Expected closing bracket\")" +
                                            whereItFails());
                d.expected = "']'";
                add(std::move(d));
                e.droppedReason = "its list is not closed";
                result_.entries.push_back(std::move(e));
                return n;
            }
        }
        if (spec) {
            checkValue(e, *spec, i + 2, end);
        } else if (e.repairedKey) {
            checkSuggestedValue(e, i + 2, end);
        }
        result_.entries.push_back(std::move(e));

        if (end + 1 < n) {
            // After "128;garbage_interval" the ':' really belongs to the next pair; the ';' note
            // already says what happened.
            const bool afterTypo = tok(end).find_first_of("=;") != std::string::npos;
            if (tok(end + 1) != "," && !afterTypo) {
                ConfigDiagnostic d = at(Sev::Warning, "separator", end + 1,
                                        "'" + tok(end + 1) + "' where ',' belongs: PyTorch does not check "
                                        "separators and steps over it");
                d.expected = "','";
                d.suggestion = ",";
                add(std::move(d));
            }
            return end + 2;
        }
        return end + 1;
    }

    // The load-time scanner stops at the first `backend` entry; past it, running off the end is
    // only found by the parsers at CUDA initialisation.
    std::string whereItFails() const {
        if (runtime_) return "; through the runtime setter this is a RuntimeError";
        if (firstBackend_ && *firstBackend_ == "cudaMallocAsync") {
            return "; the load-time scanner stopped at the earlier 'backend' entry, and backend:cudaMallocAsync reads "
                   "nothing at CUDA initialisation, so this surfaces as a RuntimeError at the first read of the "
                   "config (the first pin_memory(), say)";
        }
        return firstBackend_ ? "; the load-time scanner stopped at the earlier 'backend' entry, so this surfaces "
                               "as a RuntimeError at CUDA initialisation"
                             : "; the load-time backend scanner does this during `import torch`, which aborts "
                               "the process";
    }

    void checkKey(LintEntry& e, const ConfigKeySpec* spec) {
        if (spec) {
            e.repairedKey = std::string(spec->aliasOf.empty() ? spec->name : spec->aliasOf);
            const std::size_t uses = ++seen_[*e.repairedKey];
            if (uses == 2) {
                add(at(Sev::Warning, "duplicate-key", e.keyIndex,
                       "'" + e.key + "' is set more than once; " +
                           (*e.repairedKey == "roundup_power2_divisions"
                                ? std::string("each value is checked and applied on top of the previous one "
                                              "(a later list only overwrites the intervals it sets)")
                                : std::string("each value is checked and the last one wins"))));
            }
            if (!spec->aliasOf.empty()) {
                add(at(Sev::Note, "alias", e.keyIndex,
                       "'" + e.key + "' is the ROCm spelling of '" + std::string(spec->aliasOf) +
                           "'; the CUDA build accepts it too"));
            }
            return;
        }
        const std::size_t k = e.keyIndex;
        if (tokens_[k].isPunct()) {
            ConfigDiagnostic d = at(Sev::Error, "stray-token", k,
                                    "'" + e.key + "' stands where an option name belongs (an empty entry or a "
                                    "doubled separator); PyTorch reads it as a key and rejects it");
            d.expected = "an option name";
            add(std::move(d));
            e.droppedReason = "it is an empty entry";
            return;
        }
        ConfigDiagnostic d = at(Sev::Error, "unknown-key", k, "'" + e.key + "' is not an option of PyTorch 2.11's "
                                "allocator config (PyTorch: \"Unrecognized key\")");
        d.expected = "an option name such as max_split_size_mb, expandable_segments, garbage_collection_threshold";
        if (e.key.find_first_of("=;") != std::string::npos) {
            d.message = "'" + e.key + "' is read as a single key because '=' and ';' are not separators "
                        "(PyTorch: \"Unrecognized key\")";
            d.suggestion = withSeparators(e.key);
            e.droppedReason = "'" + e.key + "' is a key with a separator typo";
            add(std::move(d));
            return;
        }
        const std::string& base = e.key;
        if (const auto note = ConfigKeys::laterVersionNote(base)) {
            d.message = std::string(*note);
            e.droppedReason = std::string(*note);
        } else {
            d.suggestion = KeySuggester::nearest(base, canonicalKeyNames());
            if (!d.suggestion.empty()) {
                if (lower(d.suggestion) == lower(base)) {
                    d.message += "; keys are case-sensitive";
                }
                d.message += "; did you mean '" + d.suggestion + "'?";
                if (base == e.key) e.repairedKey = d.suggestion;
            }
            if (!e.repairedKey) e.droppedReason = "'" + e.key + "' is not an option and nothing similar is";
        }
        add(std::move(d));
    }

    // The key is misspelt and PyTorch stops there, but the corrected string needs to know whether
    // the value would suit the key that was probably meant: check it quietly, keep one note.
    void checkSuggestedValue(LintEntry& e, std::size_t v, std::size_t end) {
        const ConfigKeySpec* meant = ConfigKeys::find(*e.repairedKey);
        const std::size_t before = result_.diagnostics.size();
        const bool asyncBefore = asyncBackend_;
        const auto gcBefore = gcIndex_;
        const bool fractionBefore = fractionBelowOne_;
        checkValue(e, *meant, v, end);
        std::optional<ConfigDiagnostic> problem;
        for (std::size_t k = before; k < result_.diagnostics.size(); ++k) {
            if (result_.diagnostics[k].severity == Sev::Error) {
                problem = result_.diagnostics[k];
                break;
            }
        }
        result_.diagnostics.resize(before);
        asyncBackend_ = asyncBefore;
        gcIndex_ = gcBefore;
        fractionBelowOne_ = fractionBefore;
        if (problem) {
            problem->severity = Sev::Note;
            problem->code = "suggested-key-value";
            problem->message = "as '" + *e.repairedKey + "' this value would be rejected too: " + problem->message +
                               " (" + *e.repairedKey + " takes " + std::string(meant->expects) + ")";
            if (!e.repairedValue) {
                e.droppedReason = "'" + e.key + "' is not an option and its value does not suit '" + *e.repairedKey + "'";
                e.repairedKey.reset();
            }
            add(std::move(*problem));
        }
    }

    // ---- values -----------------------------------------------------------------------------
    void checkValue(LintEntry& e, const ConfigKeySpec& spec, std::size_t v, std::size_t end) {
        switch (spec.kind) {
            case ConfigValueKind::Backend: return checkBackend(e, v);
            case ConfigValueKind::Bool: return checkBool(e, v);
            case ConfigValueKind::Fraction: return checkFraction(e, spec, v);
            case ConfigValueKind::MiB:
            case ConfigValueKind::Count: return checkInteger(e, spec, v);
            case ConfigValueKind::Roundup: return checkRoundup(e, v, end);
        }
    }

    void unfixable(LintEntry& e, ConfigDiagnostic d) {
        if (e.droppedReason.empty()) e.droppedReason = "its value is not valid (" + d.message + ")";
        e.repairedValue.reset();
        add(std::move(d));
    }

    void checkBackend(LintEntry& e, std::size_t v) {
        const std::string& value = tok(v);
        if (value == "native" || value == "cudaMallocAsync") {
            if (firstBackend_ && *firstBackend_ != value) {
                ConfigDiagnostic d = at(Sev::Error, "backend-mismatch", v,
                                        std::string(runtime_ ? "the backend was chosen at `import torch` ("
                                                             : "the backend is chosen at `import torch` from the "
                                                               "first 'backend' entry (") +
                                            *firstBackend_ + "); this entry asks for " + value +
                                            ", which PyTorch refuses at CUDA initialisation (INTERNAL ASSERT "
                                            "\"Allocator backend parsed at runtime != allocator backend parsed at "
                                            "load time\")");
                d.expected = *firstBackend_;
                d.suggestion = *firstBackend_;
                e.repairedValue = *firstBackend_;
                add(std::move(d));
                return;
            }
            if (!firstBackend_) firstBackend_ = value;
            e.repairedValue = value;
            if (value == "cudaMallocAsync") asyncBackend_ = true;
            return;
        }
        if (!firstBackend_) firstBackend_ = "native";  // what the scanner falls back to
        ConfigDiagnostic d = at(Sev::Error, "bad-backend", v, "'" + value + "' is not an allocator backend");
        d.expected = "native or cudaMallocAsync";
        const std::string lv = lower(value);
        if (lv == "cudamallocasync" || lv == "async" || lv == "mallocasync" || lv == "cuda_malloc_async") {
            d.suggestion = "cudaMallocAsync";
        } else {
            d.suggestion = KeySuggester::nearest(value, {"native", "cudaMallocAsync"});
        }
        if (!d.suggestion.empty()) {
            d.message += "; did you mean '" + d.suggestion + "'?";
            e.repairedValue = d.suggestion;
            if (d.suggestion == "cudaMallocAsync") asyncBackend_ = true;
            add(std::move(d));
            return;
        }
        unfixable(e, std::move(d));
    }

    void checkBool(LintEntry& e, std::size_t v) {
        const std::string& value = tok(v);
        if (value == "True" || value == "False") {
            e.repairedValue = value;
            return;
        }
        ConfigDiagnostic d = at(Sev::Error, "bad-bool", v,
                                "'" + value + "' is not a boolean here: PyTorch accepts exactly 'True' or 'False'");
        d.expected = "True or False";
        const std::string lv = lower(value);
        if (lv == "true" || lv == "1" || lv == "yes" || lv == "on") d.suggestion = "True";
        if (lv == "false" || lv == "0" || lv == "no" || lv == "off") d.suggestion = "False";
        if (!d.suggestion.empty()) {
            d.message += " (case-sensitive); did you mean '" + d.suggestion + "'?";
            e.repairedValue = d.suggestion;
            add(std::move(d));
            return;
        }
        unfixable(e, std::move(d));
    }

    void trailingJunk(const ConfigNumber& n, std::size_t v, const char* reader) {
        const std::string& value = tok(v);
        if (n.consumed >= value.size()) return;
        const std::string rest = value.substr(n.consumed);
        if (rest.find_first_of(";=") != std::string::npos) return;  // the separator note says it
        ConfigDiagnostic d = at(Sev::Warning, "trailing-junk", v,
                                "PyTorch's " + std::string(reader) + " reads '" + value.substr(0, n.consumed) +
                                    "' and silently ignores '" + rest + "'");
        d.expected = "a plain number";
        d.suggestion = value.substr(0, n.consumed);
        add(std::move(d));
    }

    void checkFraction(LintEntry& e, const ConfigKeySpec& spec, std::size_t v) {
        const ConfigNumber n = ConfigNumber::stod(tok(v));
        if (!n.ok()) {
            ConfigDiagnostic d = at(Sev::Error, "not-a-number", v,
                                    n.status == ConfigNumber::Status::Invalid
                                        ? "'" + tok(v) + "' is not a number (std::stod throws: RuntimeError \"stod\")"
                                        : "'" + tok(v) + "' is out of double range (RuntimeError \"stod\")");
            d.expected = std::string(spec.expects);
            return unfixable(e, std::move(d));
        }
        trailingJunk(n, v, "std::stod");
        const bool gc = spec.name == "garbage_collection_threshold";
        const bool ok = gc ? (n.real > 0 && n.real < 1.0) : (n.real >= 0.0 && n.real <= 1.0);
        if (!ok) {
            ConfigDiagnostic d = at(Sev::Error, "out-of-range", v,
                                    std::string(spec.name) + " must be " +
                                        (gc ? "in the open interval (0.0, 1.0)" : "in [0.0, 1.0]") + ", got " +
                                        tok(v));
            d.expected = std::string(spec.expects);
            return unfixable(e, std::move(d));
        }
        if (!gc && n.real == 0.0) {
            add(at(Sev::Warning, "zero-fraction", v,
                   "per_process_memory_fraction 0 is accepted but allows 0 bytes: every allocation that needs a "
                   "new segment fails with OutOfMemoryError"));
        }
        e.repairedValue = formatConfigDouble(n.real);
        if (gc) gcIndex_ = e.keyIndex;
        if (!gc && n.real < 1.0) fractionBelowOne_ = true;
    }

    void checkInteger(LintEntry& e, const ConfigKeySpec& spec, std::size_t v) {
        const ConfigNumber n = ConfigNumber::stoull(tok(v));
        if (!n.ok()) {
            ConfigDiagnostic d = at(Sev::Error, "not-a-number", v,
                                    n.status == ConfigNumber::Status::Invalid
                                        ? "'" + tok(v) + "' is not an unsigned integer (std::stoull throws: "
                                                         "RuntimeError \"stoull\")"
                                        : "'" + tok(v) + "' does not fit in 64 bits (RuntimeError \"stoull\")");
            d.expected = std::string(spec.expects);
            return unfixable(e, std::move(d));
        }
        if (n.negative) {
            ConfigDiagnostic d = at(Sev::Warning, "negative-wraps", v,
                                    "'" + tok(v) + "' is negative: std::stoull wraps it around to " +
                                        std::to_string(n.integer) + ", which PyTorch accepts" +
                                        (spec.kind == ConfigValueKind::MiB && spec.name != "pinned_reserve_segment_size_mb"
                                             ? " and clamps to " + std::to_string(PyTorchConfigEmulator::kMaxMiB) +
                                                   " MiB (effectively unlimited)"
                                             : ""));
            d.expected = std::string(spec.expects);
            add(std::move(d));
        } else {
            trailingJunk(n, v, "std::stoull");
        }
        const std::uint64_t x = n.integer;
        std::string problem;
        if (spec.name == "large_segment_size_mb" && !(x > 10)) {
            problem = "large_segment_size_mb must be > 10 MB, got " + std::to_string(x);
        } else if ((spec.name == "max_split_size_mb" || spec.name == "max_non_split_rounding_mb") && x < largeMiB_) {
            problem = std::string(spec.name) + " must be >= " + std::to_string(largeMiB_) +
                      " (the large segment size in MiB), got " + std::to_string(x);
        } else if (spec.name == "pinned_reserve_segment_size_mb" && x == 0) {
            problem = "pinned_reserve_segment_size_mb must be greater than 0";
        } else if (spec.name == "pinned_num_register_threads" && !std::has_single_bit(x)) {
            problem = "pinned_num_register_threads must be a power of 2, got " + std::to_string(x);
        } else if (spec.name == "pinned_num_register_threads" && x > PyTorchConfigEmulator::kMaxRegisterThreads) {
            problem = "pinned_num_register_threads must be <= 128, got " + std::to_string(x);
        }
        if (!problem.empty()) {
            ConfigDiagnostic d = at(Sev::Error, "out-of-range", v, problem);
            d.expected = std::string(spec.expects);
            return unfixable(e, std::move(d));
        }
        const bool clamped = spec.kind == ConfigValueKind::MiB && spec.name != "pinned_reserve_segment_size_mb";
        if (clamped && !n.negative && x > PyTorchConfigEmulator::kMaxMiB) {
            add(at(Sev::Warning, "clamped", v,
                   std::to_string(x) + " MiB does not fit in bytes; PyTorch clamps it to " +
                       std::to_string(PyTorchConfigEmulator::kMaxMiB) + " MiB"));
        }
        e.repairedValue = n.negative ? tok(v) : std::to_string(x);
    }

    // Single value, or the list, stepping like parseRoundUpPower2Divisions.
    void checkRoundup(LintEntry& e, std::size_t v, std::size_t end) {
        if (tok(v) != "[") {
            const ConfigNumber n = ConfigNumber::stoull(tok(v));
            if (!n.ok()) {
                ConfigDiagnostic d = at(Sev::Error, "not-a-number", v,
                                        "'" + tok(v) + "' is not an unsigned integer (RuntimeError \"stoull\")");
                d.expected = "a power of 2, or a list [MiB:divisions,...]";
                return unfixable(e, std::move(d));
            }
            trailingJunk(n, v, "std::stoull");
            if (!std::has_single_bit(n.integer)) {
                ConfigDiagnostic d = at(Sev::Error, "not-power-of-2", v,
                                        "roundup_power2_divisions must be a power of 2, got " + std::to_string(n.integer));
                d.expected = "1, 2, 4, 8, ...";
                d.suggestion = std::to_string(n.integer == 0 ? 1 : std::bit_floor(n.integer));
                return unfixable(e, std::move(d));
            }
            e.repairedValue = std::to_string(n.integer);
            return;
        }
        std::string rebuilt = "[";
        bool fixable = true;
        for (std::size_t i = v + 1; i < end;) {
            const std::size_t k = i;
            const std::size_t val = i + 2;
            if (val >= end) {
                ConfigDiagnostic d = at(Sev::Error, "bad-list", k, "list item '" + tok(k) + "' has no value");
                d.expected = "MiB:divisions";
                unfixable(e, std::move(d));
                fixable = false;
                break;
            }
            if (tok(k + 1) != ":") {
                ConfigDiagnostic d = at(Sev::Warning, "separator", k + 1,
                                        "'" + tok(k + 1) + "' where ':' belongs inside the list; PyTorch steps over it");
                d.expected = "':'";
                d.suggestion = ":";
                add(std::move(d));
            }
            const ConfigNumber dv = ConfigNumber::stoull(tok(val));
            std::string item;
            if (!dv.ok() || !(dv.integer == 0 || std::has_single_bit(dv.integer))) {
                ConfigDiagnostic d = at(Sev::Error, dv.ok() ? "not-power-of-2" : "not-a-number", val,
                                        dv.ok() ? "divisions must be a power of 2 or 0, got " + std::to_string(dv.integer)
                                                : "'" + tok(val) + "' is not an unsigned integer (RuntimeError \"stoull\")");
                d.expected = "0, 1, 2, 4, 8, ...";
                unfixable(e, std::move(d));
                fixable = false;
            }
            if (tok(k) != ">") {
                const ConfigNumber kv = ConfigNumber::stoull(tok(k));
                if (!kv.ok() || !std::has_single_bit(kv.integer)) {
                    ConfigDiagnostic d = at(Sev::Error, kv.ok() ? "not-power-of-2" : "not-a-number", k,
                                            kv.ok() ? "interval keys must be powers of 2 (MiB), got " + std::to_string(kv.integer)
                                                    : "'" + tok(k) + "' is neither a size in MiB nor '>'");
                    d.expected = "a power of 2 in MiB (1, 2, 4, ... 32768) or '>'";
                    unfixable(e, std::move(d));
                    fixable = false;
                } else if (kv.integer > 32768) {
                    add(at(Sev::Warning, "clamped", k,
                           std::to_string(kv.integer) + " MiB is past the last interval; PyTorch uses the >= 32768 MiB "
                           "interval for it"));
                }
                if (kv.ok()) item = std::to_string(kv.integer);
            } else {
                item = ">";
            }
            if (fixable) {
                if (rebuilt.size() > 1) rebuilt += ",";
                rebuilt += item + ":" + std::to_string(dv.integer);
            }
            i = val + 1;
            if (i < end) ++i;  // the ',' between items (not checked by PyTorch either)
        }
        if (fixable) e.repairedValue = rebuilt + "]";
    }

    // ---- findings about the whole string ----------------------------------------------------
    void crossEntryWarnings() {
        if (gcIndex_ && !fractionBelowOne_) {
            add(at(Sev::Warning, "gc-inert", *gcIndex_,
                   "garbage_collection_threshold only acts when a memory fraction below 1 is set "
                   "(per_process_memory_fraction here, or torch.cuda.set_per_process_memory_fraction); "
                   "without one it never runs"));
        }
        if (!asyncBackend_) return;
        for (const LintEntry& e : result_.entries) {
            const ConfigKeySpec* spec = e.repairedKey ? ConfigKeys::find(*e.repairedKey) : nullptr;
            if (spec && spec->ignoredByAsync) {
                add(at(Sev::Warning, "ignored-by-async", e.keyIndex,
                       "'" + e.key + "' has no effect under backend:cudaMallocAsync (that backend never reads it)"));
            }
        }
    }

    std::string_view text_;
    const std::vector<ConfigToken>& tokens_;
    bool runtime_ = false;
    LintResult result_;
    std::map<std::string, std::size_t> seen_;
    std::uint64_t largeMiB_ = 20;
    std::optional<std::size_t> gcIndex_;
    std::optional<std::string> firstBackend_;  // value of the first `backend` entry, as loaded
    bool fractionBelowOne_ = false;
    bool asyncBackend_ = false;
};

}  // namespace

LintResult ConfigLinter::lint(std::string_view text, const std::vector<ConfigToken>& tokens,
                              const LintContext& context) {
    return Linter(text, tokens, context).run();
}

}  // namespace allocscope::alloc
