#include "allocator/workloads/LlmInferenceVarlenWorkload.h"

#include <algorithm>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/workloads/ProgramBuilder.h"
#include "allocator/workloads/Rng.h"

namespace allocscope::alloc {

std::string LlmInferenceVarlenWorkload::summary() const {
    return "LLM serving: requests of random batch and length, KV caches grown by reallocation";
}

std::string LlmInferenceVarlenWorkload::description() const {
    return "A decoder-only model serves a stream of requests, each with its own batch size and prompt "
           "length (drawn from the seed). The weights (fp16, one tensor per block) are loaded first. Per "
           "request, prefill allocates the KV cache of every block for the prompt plus the prefill "
           "activations; decoding then appends tokens, and every `grow_every` tokens each block's K and "
           "V caches are reallocated one chunk larger and the old ones freed (torch.cat style), which "
           "leaves freed caches of every past size behind. Per-token activations come and go in "
           "between. When a request ends its caches are freed. Growing caches with interleaved "
           "long-lived pieces is where expandable_segments and max_split_size_mb differ most.";
}

std::vector<ParamSpec> LlmInferenceVarlenWorkload::params() const {
    return {
        ParamSpec::integer("requests", 24, 1, 100000, "requests served one after another"),
        ParamSpec::integer("layers", 16, 1, 256, "decoder blocks (one K and one V cache each)"),
        ParamSpec::integer("d_model", 2048, 64, 65536, "hidden width"),
        ParamSpec::integer("max_batch", 16, 1, 1024, "largest batch of a request (uniform 1..max)"),
        ParamSpec::integer("max_prompt", 1024, 1, 131072, "longest prompt in tokens (uniform 16..max)"),
        ParamSpec::integer("max_new_tokens", 256, 1, 131072, "longest generation (uniform 1..max)"),
        ParamSpec::integer("grow_every", 32, 1, 131072, "tokens per KV-cache reallocation"),
        ParamSpec::integer("vocab", 32000, 2, 1'000'000, "vocabulary (logits per decoding step)"),
    };
}

GeneratedProgram LlmInferenceVarlenWorkload::generate(const WorkloadParams& params, std::uint64_t seed) const {
    Rng rng(seed);
    const auto layers = static_cast<std::uint64_t>(params.getInt("layers"));
    const auto d = static_cast<std::uint64_t>(params.getInt("d_model"));
    const auto maxBatch = static_cast<std::uint64_t>(params.getInt("max_batch"));
    const auto maxPrompt = static_cast<std::uint64_t>(params.getInt("max_prompt"));
    const auto maxNew = static_cast<std::uint64_t>(params.getInt("max_new_tokens"));
    const auto growEvery = static_cast<std::uint64_t>(params.getInt("grow_every"));
    const auto vocab = static_cast<std::uint64_t>(params.getInt("vocab"));
    constexpr std::uint64_t kHalf = 2;

    ProgramBuilder b("serve.py");
    const std::uint32_t sW = b.stack("load_weights", 20);
    const std::uint32_t sKv = b.stack("grow_cache", 55, "decode", 80);
    const std::uint32_t sAct = b.stack("forward", 66, "decode", 82);
    const std::uint32_t sPre = b.stack("forward", 66, "prefill", 70);

    b.begin("load weights");
    b.alloc(vocab * d * kHalf, sW);  // embedding
    for (std::uint64_t l = 0; l < layers; ++l) b.alloc(12 * d * d * kHalf, sW);
    b.end("load weights");

    const auto requests = static_cast<std::uint64_t>(params.getInt("requests"));
    for (std::uint64_t r = 0; r < requests; ++r) {
        const std::uint64_t batch = rng.uniform(1, maxBatch);
        const std::uint64_t prompt = rng.uniform(std::min<std::uint64_t>(16, maxPrompt), maxPrompt);
        const std::uint64_t generate = rng.uniform(1, maxNew);
        const std::uint64_t perToken = batch * d * kHalf;  // one K (or V) row for the whole batch
        b.begin("request");
        // Prefill: caches sized for the prompt rounded up to a growth chunk.
        std::uint64_t capacity = (prompt + growEvery - 1) / growEvery * growEvery;
        std::vector<std::uint64_t> k(layers), v(layers);
        b.begin("prefill");
        for (std::uint64_t l = 0; l < layers; ++l) {
            const std::uint64_t h = b.alloc(batch * prompt * d * kHalf, sPre);
            const std::uint64_t mlp = b.alloc(4 * batch * prompt * d * kHalf, sPre);
            k[l] = b.alloc(capacity * perToken, sKv);
            v[l] = b.alloc(capacity * perToken, sKv);
            b.free(mlp);
            b.free(h);
        }
        b.end("prefill");
        b.begin("decode");
        std::uint64_t length = prompt;
        for (std::uint64_t t = 0; t < generate; ++t) {
            ++length;
            const bool grow = length > capacity;
            if (grow) capacity += growEvery;
            const std::uint64_t x = b.alloc(perToken, sAct);
            for (std::uint64_t l = 0; l < layers; ++l) {
                if (grow) {  // torch.cat([cache, new_chunk]): the larger copy, then the old one goes
                    const std::uint64_t nk = b.alloc(capacity * perToken, sKv);
                    b.free(k[l]);
                    k[l] = nk;
                    const std::uint64_t nv = b.alloc(capacity * perToken, sKv);
                    b.free(v[l]);
                    v[l] = nv;
                }
                const std::uint64_t scores = b.alloc(batch * length * 4 * 32, sAct);  // 32 heads, fp32 softmax
                const std::uint64_t mlp = b.alloc(4 * perToken, sAct);
                b.free(scores);
                b.free(mlp);
            }
            const std::uint64_t logits = b.alloc(batch * vocab * 4, sAct);
            b.free(logits);
            b.free(x);
        }
        b.end("decode");
        for (std::uint64_t l = 0; l < layers; ++l) {
            b.free(k[l]);
            b.free(v[l]);
        }
        b.end("request");
    }
    return b.take();
}

}  // namespace allocscope::alloc
