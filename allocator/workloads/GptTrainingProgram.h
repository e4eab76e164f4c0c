#pragma once
// The allocation sequence of training a GPT-like model with PyTorch eager (nn.Embedding,
// nn.MultiheadAttention + LayerNorm + GELU MLP blocks, a bias-free vocabulary head,
// cross-entropy, AdamW with foreach kernels, zero_grad(set_to_none=True)).
//
// The order and sizes of the requests were read off the shared train_gpt trace (torch 2.11,
// H100, fp32, 6 layers, d=768, 12 heads, vocabulary 32,000, batch 8 x 512): every tensor of that
// trace has a counterpart here whose size is written as a formula of the shape (e.g. the
// attention projection's output is 3·B·T·d·4 bytes), so other shapes scale the way PyTorch would.
// At the recorded shape the request sequence is the trace's, op for op. Mixed precision,
// activation checkpointing and gradient accumulation are modelled on top of it (approximations,
// documented where they are emitted).
#include <cstdint>
#include <vector>

#include "allocator/workloads/ProgramBuilder.h"

namespace allocscope::alloc {

struct GptShape {
    std::uint64_t layers = 6;
    std::uint64_t d = 768;
    std::uint64_t heads = 12;
    std::uint64_t vocab = 32000;
    std::uint64_t batch = 8;
    std::uint64_t seq = 512;
    std::uint64_t steps = 5;
    std::uint64_t accumulation = 1;   // micro-batches per optimizer step
    bool mixedPrecision = false;      // autocast fp16/bf16: 2-byte activations, weight casts
    bool checkpointing = false;       // torch.utils.checkpoint around each block
    bool adamw = true;                // false: plain SGD (no optimizer state)
};

class GptTrainingProgram {
public:
    GptTrainingProgram(ProgramBuilder& builder, const GptShape& shape);
    void emit();

private:
    // Parameters, in model.parameters() order within a block.
    enum BlockParam { Ln1W, Ln1B, InW, InB, OutW, OutB, Ln2W, Ln2B, Fc1W, Fc1B, Fc2W, Fc2B, kBlockParams };
    struct Layer {  // forward tensors a block keeps for its backward
        std::uint64_t m1 = 0, r1 = 0, ain = 0, qkvt = 0, aout = 0, lse = 0, aoutt = 0, xmid = 0;
        std::uint64_t ln2 = 0, m2 = 0, r2 = 0, fc1 = 0, gelu = 0, xout = 0;
        std::vector<std::uint64_t> casts;  // autocast weight copies (in, out, fc1, fc2)
    };

    std::uint64_t paramBytes(std::size_t index) const;  // index into params_
    std::size_t paramIndex(std::uint64_t layer, BlockParam p) const { return 1 + layer * kBlockParams + p; }
    void allocParams();
    void forwardBlock(std::uint64_t layer, bool keepAll);
    void freeBlockIntermediates(std::uint64_t layer);
    void backwardBlock(std::uint64_t layer, std::uint64_t& residualGrad, std::uint64_t headGrad);
    void biasGradScratch(std::uint64_t outFeatures);
    void grad(std::size_t param);
    void microBatch(std::uint64_t step, std::uint64_t micro);
    void optimizerStep(bool first);

    ProgramBuilder& b_;
    GptShape s_;
    std::uint64_t act_ = 4;  // bytes per activation element
    std::uint64_t A_ = 0;    // B·T·d·act: one hidden-state tensor
    std::uint64_t BT_ = 0;
    std::vector<std::uint64_t> params_, grads_, adamM_, adamV_;
    std::vector<Layer> layers_;
    std::uint64_t idx_ = 0, mask_ = 0, emb_ = 0, logits_ = 0, loss_ = 0;
    std::uint64_t lossScratch_ = 0;
    bool workspaceForward_ = false, workspaceBackward_ = false, maskCache_ = false;
    bool accumulating_ = false;  // grads exist already: new grads are added in place
    std::uint32_t sParam_ = 0, sAct_ = 0, sAttn_ = 0, sMlp_ = 0, sHead_ = 0, sBack_ = 0, sOpt_ = 0, sWs_ = 0;
};

}  // namespace allocscope::alloc
