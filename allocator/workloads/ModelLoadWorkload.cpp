#include "allocator/workloads/ModelLoadWorkload.h"

#include "allocator/workloads/ProgramBuilder.h"

namespace allocscope::alloc {

std::string ModelLoadWorkload::summary() const {
    return "loading a multi-billion-parameter model layer by layer, fp32 -> fp16";
}

std::string ModelLoadWorkload::description() const {
    return "A checkpoint stored in fp32 is loaded block by block: each weight is copied to the GPU in "
           "fp32, converted to an fp16 tensor, and the fp32 copy is freed. The fp32 staging tensors are "
           "twice the size of what stays, so every freed staging block is later split to hold the "
           "smaller fp16 weights of the following blocks; the result is a reserved footprint well "
           "above the model's size, with the unused tails of those blocks stranded inside segments. "
           "Larger max_split_size_mb values, expandable segments and an empty_cache() after loading "
           "(parameter) change the end state. Sizes follow a Llama-style block: attention q, k, v, o "
           "(d x d each) and a gated MLP (3 x d x 2.6875d).";
}

std::vector<ParamSpec> ModelLoadWorkload::params() const {
    return {
        ParamSpec::real("billions", 7.0, 0.01, 1000.0, "approximate parameter count in billions"),
        ParamSpec::integer("layers", 32, 1, 1024, "decoder blocks"),
        ParamSpec::integer("vocab", 32000, 2, 1'000'000, "vocabulary (embedding and head)"),
        ParamSpec::boolean("empty_cache", false, "call empty_cache() after loading"),
    };
}

GeneratedProgram ModelLoadWorkload::generate(const WorkloadParams& params, std::uint64_t /*seed*/) const {
    const double billions = params.getDouble("billions");
    const auto layers = static_cast<std::uint64_t>(params.getInt("layers"));
    const auto vocab = static_cast<std::uint64_t>(params.getInt("vocab"));
    // Parameters: per block ~ 4 d^2 (attention) + 3 * d * 2.6875 d (MLP) = 12.0625 d^2, plus the
    // embedding and the head (vocab x d each). The widest d (a multiple of 64) within `billions`.
    const double budget = billions * 1e9;
    const auto total = [&](std::uint64_t width) {
        const double w = static_cast<double>(width);
        return static_cast<double>(layers) * 12.0625 * w * w + 2.0 * static_cast<double>(vocab) * w;
    };
    std::uint64_t d = 64;
    while (total(d + 64) <= budget) d += 64;
    const std::uint64_t ffn = (d * 43 / 16 + 255) / 256 * 256;

    ProgramBuilder b("load_model.py");
    const std::uint32_t sStage = b.stack("load_state_dict", 2150, "_load_from_state_dict", 2040);
    const std::uint32_t sHalf = b.stack("half", 1080, "convert", 1301);
    std::vector<std::uint64_t> kept;
    auto load = [&](std::uint64_t elements) {
        const std::uint64_t fp32 = b.alloc(elements * 4, sStage);
        kept.push_back(b.alloc(elements * 2, sHalf));
        b.free(fp32);
    };
    b.begin("embedding");
    load(vocab * d);
    b.end("embedding");
    for (std::uint64_t l = 0; l < layers; ++l) {
        b.begin("block " + std::to_string(l));
        for (int i = 0; i < 4; ++i) load(d * d);   // q, k, v, o
        for (int i = 0; i < 3; ++i) load(d * ffn);  // gate, up, down
        load(d);                                    // two RMSNorm weights
        load(d);
        b.end("block " + std::to_string(l));
    }
    b.begin("head");
    load(d);
    load(vocab * d);
    b.end("head");
    if (params.getBool("empty_cache")) b.emptyCache();
    return b.take();
}

}  // namespace allocscope::alloc
