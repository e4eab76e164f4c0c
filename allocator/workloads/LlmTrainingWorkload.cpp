#include "allocator/workloads/LlmTrainingWorkload.h"

#include "allocator/workloads/GptTrainingProgram.h"

namespace allocscope::alloc {

std::string LlmTrainingWorkload::summary() const {
    return "GPT training: parameters, gradients, AdamW states, activations, 500 MiB logits";
}

std::string LlmTrainingWorkload::description() const {
    return "A GPT-like model (embedding, transformer blocks with multi-head attention and a GELU MLP, "
           "a vocabulary head) trained with AdamW. model.to(cuda) allocates the parameters; each step "
           "allocates activations block by block in the forward pass, the vocabulary-sized logits and "
           "their cross-entropy copies (the peak), then frees activations block by block in the "
           "backward pass while gradients appear; the first optimizer step adds two AdamW states per "
           "parameter. Sizes are formulas of the shape, and at the default shape the requests are "
           "exactly those PyTorch 2.11 made on an H100 (the shared train_gpt trace). Options: "
           "mixed precision (2-byte activations plus half-precision weight copies), activation "
           "checkpointing (blocks keep only their output and recompute in the backward), gradient "
           "accumulation (micro-batches add into existing gradients).";
}

std::vector<ParamSpec> LlmTrainingWorkload::params() const {
    return {
        ParamSpec::integer("layers", 6, 1, 256, "transformer blocks"),
        ParamSpec::integer("d_model", 768, 8, 65536, "hidden width (a multiple of heads)"),
        ParamSpec::integer("heads", 12, 1, 1024, "attention heads"),
        ParamSpec::integer("vocab", 32000, 2, 1'000'000, "vocabulary size"),
        ParamSpec::integer("batch", 8, 1, 4096, "sequences per micro-batch"),
        ParamSpec::integer("seq_len", 512, 1, 131072, "tokens per sequence"),
        ParamSpec::integer("steps", 5, 1, 10000, "optimizer steps"),
        ParamSpec::integer("accumulation", 1, 1, 1024, "micro-batches per optimizer step"),
        ParamSpec::choice("precision", "fp32", {"fp32", "fp16", "bf16"}, "activation precision (fp16/bf16 = autocast)"),
        ParamSpec::boolean("checkpointing", false, "activation checkpointing around each block"),
        ParamSpec::choice("optimizer", "adamw", {"adamw", "sgd"}, "AdamW (two states per parameter) or plain SGD"),
    };
}

GeneratedProgram LlmTrainingWorkload::generate(const WorkloadParams& params, std::uint64_t /*seed*/) const {
    GptShape shape;
    shape.layers = static_cast<std::uint64_t>(params.getInt("layers"));
    shape.d = static_cast<std::uint64_t>(params.getInt("d_model"));
    shape.heads = static_cast<std::uint64_t>(params.getInt("heads"));
    shape.vocab = static_cast<std::uint64_t>(params.getInt("vocab"));
    shape.batch = static_cast<std::uint64_t>(params.getInt("batch"));
    shape.seq = static_cast<std::uint64_t>(params.getInt("seq_len"));
    shape.steps = static_cast<std::uint64_t>(params.getInt("steps"));
    shape.accumulation = static_cast<std::uint64_t>(params.getInt("accumulation"));
    shape.mixedPrecision = params.getChoice("precision") != "fp32";
    shape.checkpointing = params.getBool("checkpointing");
    shape.adamw = params.getChoice("optimizer") == "adamw";
    if (shape.d % shape.heads != 0) {
        throw WorkloadError("d_model must be a multiple of heads", "d_model=" + std::to_string(shape.d) +
                                                                       ",heads=" + std::to_string(shape.heads));
    }
    ProgramBuilder b("train_gpt.py");
    GptTrainingProgram(b, shape).emit();
    return b.take();
}

}  // namespace allocscope::alloc
