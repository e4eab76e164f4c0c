#include "allocator/config/PyTorchConfigEmulator.h"

#include <algorithm>
#include <bit>
#include <string_view>

#include "allocator/config/ConfigKeys.h"
#include "allocator/config/ConfigNumber.h"

namespace allocscope::alloc {
namespace {

// Where released 2.11 wheels say their asserts are (observed on torch 2.11.0+cu130): the
// tokenizer's operator[] (line 55) and checkIndex (line 124) fail with the same text.
constexpr int kOperatorIndexLine = 55;
constexpr int kCheckIndexLine = 124;

struct Failure {
    Verdict verdict;
    EmulatedFailure kind;
    std::string message;
    std::size_t tokenIndex;
};

// One walk over the tokens with PyTorch's accessors. Every accessor fails exactly where
// ConfigTokenizer's would; `key` is the index of the key being read, for the caller's pointer.
class Walk {
public:
    Walk(const std::vector<std::string>& tokens, Verdict assertVerdict)
        : tokens_(tokens), assertVerdict_(assertVerdict) {}

    std::size_t size() const { return tokens_.size(); }
    // tokenizer[i]
    const std::string& at(std::size_t i) const {
        outOfBounds(i, kOperatorIndexLine);
        return tokens_[i];
    }
    // checkIndex(i), which checkToken/toSizeT/toDouble/toBool/skipKey use.
    void checkIndex(std::size_t i) const { outOfBounds(i, kCheckIndexLine); }
    const std::string& checked(std::size_t i) const {
        checkIndex(i);
        return tokens_[i];
    }
    // checkToken's boolean is ignored by every 2.11 parser: only the index is checked.
    void checkToken(std::size_t i) const { checkIndex(i); }

    std::uint64_t toSizeT(std::size_t i) const {
        const ConfigNumber n = ConfigNumber::stoull(checked(i));
        if (!n.ok()) throw Failure{Verdict::RuntimeErrorAtInit, EmulatedFailure::NotANumber, "stoull", i};
        return n.integer;
    }
    double toDouble(std::size_t i) const {
        const ConfigNumber n = ConfigNumber::stod(checked(i));
        if (!n.ok()) throw Failure{Verdict::RuntimeErrorAtInit, EmulatedFailure::NotANumber, "stod", i};
        return n.real;
    }
    bool toBool(std::size_t i) const {
        const std::string& token = checked(i);
        if (token == "True") return true;
        if (token == "False") return false;
        throw Failure{Verdict::ValueErrorAtInit, EmulatedFailure::BadBool,
                      "Expected 'True' or 'False' at index " + std::to_string(i) +
                          " in ConfigTokenizer but got '" + token + "'",
                      i};
    }
    std::size_t skipKey(std::size_t i) const {
        checkToken(++i);
        ++i;
        checkIndex(i);
        if (tokens_[i] != "[") return i;
        while (++i < tokens_.size() && tokens_[i] != "]") {
        }
        if (i >= tokens_.size()) {
            throw Failure{assertVerdict_, EmulatedFailure::MissingBracket,
                          "i < config_.size() INTERNAL ASSERT FAILED at \"/pytorch/c10/core/AllocatorConfig.h\":115, "
                          "please report a bug to PyTorch. Expected closing bracket ']' in ConfigTokenizer "
                          "but reached end of config",
                          i};
        }
        return i;
    }
    [[noreturn]] void valueError(std::size_t i, std::string message) const {
        throw Failure{Verdict::ValueErrorAtInit, EmulatedFailure::InvalidValue, std::move(message), i};
    }

private:
    void outOfBounds(std::size_t i, int line) const {
        if (i >= tokens_.size()) {
            throw Failure{assertVerdict_, EmulatedFailure::IndexOutOfBounds, PyTorchConfigEmulator::indexAssertMessage(line),
                          i};
        }
    }

    const std::vector<std::string>& tokens_;
    Verdict assertVerdict_;
};

// BackendStaticInitializer: skips every key until the first `backend`, reads its value, stops.
bool scanBackendAtLoad(const Walk& w, std::size_t& key) {
    for (std::size_t i = 0; i < w.size(); ++i) {
        key = i;
        if (w.at(i) == "backend") {
            w.checkToken(++i);
            ++i;
            return w.at(i) == "cudaMallocAsync";
        }
        i = w.skipKey(i);
        if (i + 1 < w.size()) w.checkToken(++i);
    }
    return false;
}

// CUDAAllocatorConfig::parseArgs: backend and the CUDA-level keys; common keys are skipped.
void parseCudaLevel(const Walk& w, bool asyncAtLoad, AllocatorConfig& c, std::size_t& key) {
    for (std::size_t i = 0; i < w.size(); ++i) {
        key = i;
        const std::string& k = w.at(i);
        if (k == "backend") {
            w.checkToken(++i);
            ++i;
            const std::string& v = w.at(i);
            if (v != "native" && v != "cudaMallocAsync") {
                w.valueError(i, "Unknown allocator backend, options are native and cudaMallocAsync");
            }
            const char* loaded = asyncAtLoad ? "cudaMallocAsync" : "native";
            if (v != loaded) {
                throw Failure{Verdict::RuntimeErrorAtInit, EmulatedFailure::BackendMismatch,
                              "tokenizer[i] == get()->name() INTERNAL ASSERT FAILED at "
                              "\"/pytorch/c10/cuda/CUDAAllocatorConfig.cpp\":44, please report a bug to PyTorch. "
                              "Allocator backend parsed at runtime != allocator backend parsed at load time, " +
                                  v + " != " + loaded,
                              i};
            }
        } else if (k == "release_lock_on_cudamalloc" || k == "release_lock_on_hipmalloc") {
            w.checkToken(++i);
            c.releaseLockOnCudaMalloc = w.toBool(++i);
        } else if (k == "pinned_use_cuda_host_register" || k == "pinned_use_hip_host_register") {
            w.checkToken(++i);
            c.pinnedUseCudaHostRegister = w.toBool(++i);
        } else if (k == "pinned_num_register_threads") {
            w.checkToken(++i);
            const std::uint64_t v = w.toSizeT(++i);
            if (!std::has_single_bit(v)) {
                w.valueError(i, "Number of register threads has to be power of 2, got " + std::to_string(v));
            }
            if (v > PyTorchConfigEmulator::kMaxRegisterThreads) {
                w.valueError(i, "Number of register threads should be less than or equal to 128, got " +
                                    std::to_string(v));
            }
            c.pinnedNumRegisterThreads = v;
        } else if (k == "pinned_reserve_segment_size_mb") {
            w.checkToken(++i);
            const std::uint64_t v = w.toSizeT(++i);
            if (v == 0) w.valueError(i, "Pinned reserve segment size has to be greater than 0");
            c.pinnedReserveSegmentSizeMb = v;
        } else if (k == "graph_capture_record_stream_reuse") {
            w.checkToken(++i);
            c.graphCaptureRecordStreamReuse = w.toBool(++i);
        } else if (k == "per_process_memory_fraction") {
            w.checkToken(++i);
            const double v = w.toDouble(++i);
            if (!(v >= 0.0 && v <= 1.0)) {
                w.valueError(i, "per_process_memory_fraction is invalid, set it in [0.0, 1.0]");
            }
            c.perProcessMemoryFraction = v;
        } else {
            if (!ConfigKeys::isKnown(k)) {
                throw Failure{Verdict::ValueErrorAtInit, EmulatedFailure::UnknownKey,
                              "Unrecognized key '" + k + "' in CUDA allocator config.", i};
            }
            i = w.skipKey(i);
        }
        if (i + 1 < w.size()) w.checkToken(++i);
    }
}

std::size_t parseRoundup(const Walk& w, std::size_t i, AllocatorConfig& c) {
    auto& div = c.roundupPower2Divisions;
    w.checkToken(++i);
    bool firstValue = true;
    if (w.at(++i) == "[") {
        std::size_t lastIndex = 0;
        while (++i < w.size() && w.at(i) != "]") {
            const std::size_t valueIndex = i;
            w.checkToken(++i);
            const std::uint64_t value = w.toSizeT(++i);
            if (!(value == 0 || std::has_single_bit(value))) {
                w.valueError(i, "For roundups, the divisions has to be power of 2 or 0 to disable roundup ");
            }
            if (w.at(valueIndex) == ">") {
                std::fill(div.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(lastIndex + 1, 16)),
                          div.end(), value);
            } else {
                const std::uint64_t boundary = w.toSizeT(valueIndex);
                if (!std::has_single_bit(boundary)) {
                    w.valueError(valueIndex, "For roundups, the intervals have to be power of 2 ");
                }
                const std::size_t index =
                    std::min<std::size_t>(static_cast<std::size_t>(std::bit_width(boundary)) - 1, 15);
                if (firstValue) {
                    std::fill(div.begin(), div.begin() + static_cast<std::ptrdiff_t>(index), value);
                    firstValue = false;
                }
                div[index] = value;
                lastIndex = index;
            }
            if (w.at(i + 1) != "]") w.checkToken(++i);
        }
        if (i >= w.size()) {
            throw Failure{Verdict::RuntimeErrorAtInit, EmulatedFailure::MissingBracket,
                          "i < tokenizer.size() INTERNAL ASSERT FAILED at \"/pytorch/c10/core/AllocatorConfig.cpp\", "
                          "please report a bug to PyTorch. Expected closing bracket ']' in ConfigTokenizer but "
                          "reached end of config",
                          i};
        }
    } else {
        const std::uint64_t value = w.toSizeT(i);
        if (!std::has_single_bit(value)) w.valueError(i, "For roundups, the divisions has to be power of 2 ");
        div.fill(value);
    }
    return i;
}

std::uint64_t parseMiBAtLeast(const Walk& w, std::size_t& i, const char* name, std::uint64_t minMiB) {
    w.checkToken(++i);
    std::uint64_t v = w.toSizeT(++i);
    if (v < minMiB) {
        w.valueError(i, std::string("CachingAllocator option ") + name + " too small, must be >= " +
                            std::to_string(minMiB));
    }
    v = std::min(v, PyTorchConfigEmulator::kMaxMiB);
    return v * kMiB;
}

// AcceleratorAllocatorConfig::parseArgs.
void parseCommon(const Walk& w, AllocatorConfig& c, std::size_t& key) {
    // First pass: every token equal to the key counts, wherever it stands (PyTorch does not step
    // over values here), so that the lower bounds below use the configured large segment size.
    for (std::size_t i = 0; i < w.size(); ++i) {
        if (w.at(i) != "large_segment_size_mb") continue;
        key = i;
        w.checkToken(++i);
        std::uint64_t v = w.toSizeT(++i);
        if (!(v > 10)) w.valueError(i, "CachingAllocator option large_segment_size_mb must be > 10 MB");
        v = std::min(v, PyTorchConfigEmulator::kMaxMiB);
        c.largeSegmentSize = v * kMiB;
    }
    c.maxNonSplitRounding = c.largeSegmentSize;
    const std::uint64_t minMiB = c.largeSegmentSize / kMiB;

    for (std::size_t i = 0; i < w.size(); ++i) {
        key = i;
        const std::string& k = w.at(i);
        if (k == "large_segment_size_mb") {
            i = w.skipKey(i);
        } else if (k == "max_split_size_mb") {
            c.maxSplitSize = parseMiBAtLeast(w, i, "max_split_size_mb", minMiB);
        } else if (k == "max_non_split_rounding_mb") {
            c.maxNonSplitRounding = parseMiBAtLeast(w, i, "max_non_split_rounding_mb", minMiB);
        } else if (k == "garbage_collection_threshold") {
            w.checkToken(++i);
            const double v = w.toDouble(++i);
            if (!(v > 0 && v < 1.0)) w.valueError(i, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
            c.garbageCollectionThreshold = v;
        } else if (k == "roundup_power2_divisions") {
            i = parseRoundup(w, i, c);
        } else if (k == "expandable_segments") {
            w.checkToken(++i);
            c.expandableSegments = w.toBool(++i);
        } else if (k == "pinned_use_background_threads") {
            w.checkToken(++i);
            c.pinnedUseBackgroundThreads = w.toBool(++i);
        } else {
            // The CUDA hook is registered, so the common parser checks keys too.
            if (!ConfigKeys::isKnown(k)) {
                throw Failure{Verdict::ValueErrorAtInit, EmulatedFailure::UnknownKey,
                              "Unrecognized key '" + k + "' in Accelerator allocator config.", i};
            }
            i = w.skipKey(i);
        }
        if (i + 1 < w.size()) w.checkToken(++i);
    }
}

}  // namespace

std::string PyTorchConfigEmulator::indexAssertMessage(int line) {
    return "i < config_.size() INTERNAL ASSERT FAILED at \"/pytorch/c10/core/AllocatorConfig.h\":" +
           std::to_string(line) + ", please report a bug to PyTorch. Index out of bounds in ConfigTokenizer";
}

const char* PyTorchConfigEmulator::abortPrefix() {
    return "terminate called after throwing an instance of 'c10::Error'\n  what():  ";
}

EmulationOutcome PyTorchConfigEmulator::runRuntime(const std::vector<std::string>& tokens,
                                                   const AllocatorConfig& current) {
    EmulationOutcome out;
    out.config = current;
    out.config.maxSplitSize = kUnlimited;
    out.config.roundupPower2Divisions.fill(0);
    out.config.garbageCollectionThreshold = 0.0;
    std::size_t key = 0;
    try {
        const Walk w(tokens, Verdict::RuntimeErrorAtInit);
        parseCommon(w, out.config, key);
        parseCudaLevel(w, current.backend == Backend::CudaMallocAsync, out.config, key);
    } catch (const Failure& f) {
        out.verdict = f.verdict;
        out.failure = f.kind;
        out.message = f.message;
        out.tokenIndex = f.tokenIndex;
        out.keyIndex = key;
    }
    return out;
}

EmulationOutcome PyTorchConfigEmulator::run(const std::vector<std::string>& tokens) {
    EmulationOutcome out;
    std::size_t key = 0;
    bool asyncAtLoad = false;
    try {
        asyncAtLoad = scanBackendAtLoad(Walk(tokens, Verdict::AbortAtImport), key);
        if (asyncAtLoad) {
            // The async backend builds no DeviceCachingAllocator, so CUDA init reads no config.
            // The first later reader (the pinned host allocator, say) parses the common part
            // first, then the CUDA-level part (observed on 2.11).
            out.config.backend = Backend::CudaMallocAsync;
            const Walk later(tokens, Verdict::RuntimeErrorOnFirstUse);
            parseCommon(later, out.config, key);
            parseCudaLevel(later, asyncAtLoad, out.config, key);
        } else {
            const Walk init(tokens, Verdict::RuntimeErrorAtInit);
            parseCudaLevel(init, asyncAtLoad, out.config, key);
            parseCommon(init, out.config, key);
        }
    } catch (const Failure& f) {
        out.verdict = f.verdict;
        if (asyncAtLoad && f.verdict == Verdict::ValueErrorAtInit) out.verdict = Verdict::ValueErrorOnFirstUse;
        if (asyncAtLoad && f.verdict == Verdict::RuntimeErrorAtInit) out.verdict = Verdict::RuntimeErrorOnFirstUse;
        out.failure = f.kind;
        out.message = f.verdict == Verdict::AbortAtImport ? abortPrefix() + f.message : f.message;
        out.tokenIndex = f.tokenIndex;
        out.keyIndex = key;
    }
    return out;
}

}  // namespace allocscope::alloc
