#include "allocator/workloads/GptTrainingProgram.h"

#include "allocator/config/AllocatorConfig.h"

namespace allocscope::alloc {

namespace {
constexpr std::uint64_t kCublasWorkspace = 32 * kMiB;  // cuBLAS workspace per handle on Hopper
std::uint64_t scaled(std::uint64_t recorded, std::uint64_t tokens) {
    // Embedding-backward sort scratch: recorded at 4096 tokens, proportional to the token count.
    const std::uint64_t v = recorded * tokens / 4096;
    return v == 0 ? 1 : v;
}
}  // namespace

GptTrainingProgram::GptTrainingProgram(ProgramBuilder& builder, const GptShape& shape) : b_(builder), s_(shape) {
    act_ = s_.mixedPrecision ? 2 : 4;
    BT_ = s_.batch * s_.seq;
    A_ = BT_ * s_.d * act_;
    sParam_ = b_.stack("_apply", 1174, "to", 1340);
    sAct_ = b_.stack("forward", 86, "train_step", 120);
    sAttn_ = b_.stack("multi_head_attention_forward", 6487, "forward", 80);
    sMlp_ = b_.stack("forward", 83, "train_step", 120);
    sHead_ = b_.stack("forward", 95, "train_step", 121);
    sBack_ = b_.stack("backward", 581, "train_step", 123);
    sOpt_ = b_.stack("_multi_tensor_adamw", 720, "step", 124);
    sWs_ = b_.stack("getCurrentCUDABlasHandle", 0, "forward", 86);
}

std::uint64_t GptTrainingProgram::paramBytes(std::size_t index) const {
    const std::uint64_t d = s_.d;
    if (index == 0 || index == 1 + s_.layers * kBlockParams) return s_.vocab * d * 4;  // embedding, head
    switch (static_cast<BlockParam>((index - 1) % kBlockParams)) {
    case Ln1W: case Ln1B: case Ln2W: case Ln2B: case OutB: case Fc2B: return d * 4;
    case InW: return 3 * d * d * 4;
    case InB: return 3 * d * 4;
    case OutW: return d * d * 4;
    case Fc1W: case Fc2W: return 4 * d * d * 4;
    case Fc1B: return 4 * d * 4;
    case kBlockParams: break;
    }
    return 0;
}

// model.to(device): nn.Module._apply visits a block's children before its own parameters, so
// MultiheadAttention's out_proj comes before in_proj_weight/in_proj_bias.
void GptTrainingProgram::allocParams() {
    const std::size_t n = 2 + s_.layers * kBlockParams;
    params_.assign(n, 0);
    grads_.assign(n, 0);
    params_[0] = b_.alloc(paramBytes(0), sParam_);
    static constexpr BlockParam kApplyOrder[] = {Ln1W, Ln1B, OutW, OutB, InW, InB, Ln2W, Ln2B, Fc1W, Fc1B, Fc2W, Fc2B};
    for (std::uint64_t l = 0; l < s_.layers; ++l) {
        for (BlockParam p : kApplyOrder) params_[paramIndex(l, p)] = b_.alloc(paramBytes(paramIndex(l, p)), sParam_);
    }
    params_[n - 1] = b_.alloc(paramBytes(n - 1), sParam_);
}

void GptTrainingProgram::forwardBlock(std::uint64_t layer, bool keepAll) {
    Layer& L = layers_[layer];
    const std::uint64_t d = s_.d;
    const std::uint64_t S = BT_ * 4;  // LayerNorm mean / rstd, always fp32
    const std::uint64_t ln1 = b_.alloc(A_, sAct_);
    L.m1 = b_.alloc(S, sAct_);
    L.r1 = b_.alloc(S, sAct_);
    L.ain = b_.alloc(A_, sAttn_);
    // Autocast casts each weight to half precision at its first use in the forward; the copy is
    // saved for the backward (an approximation: one cast per linear per forward).
    if (s_.mixedPrecision) L.casts.push_back(b_.alloc(3 * d * d * 2, sAttn_));
    const std::uint64_t qkv = b_.alloc(3 * A_, sAttn_);
    if (!workspaceForward_) {
        b_.alloc(kCublasWorkspace, sWs_);  // kept by the handle until the process ends
        workspaceForward_ = true;
    }
    L.qkvt = b_.alloc(3 * A_, sAttn_);
    b_.free(qkv);
    L.aout = b_.alloc(A_, sAttn_);
    L.lse = b_.alloc(s_.batch * s_.heads * ((s_.seq + 31) / 32 * 32) * 4, sAttn_);
    L.aoutt = b_.alloc(A_, sAttn_);
    if (s_.mixedPrecision) L.casts.push_back(b_.alloc(d * d * 2, sAttn_));
    const std::uint64_t oproj = b_.alloc(A_, sAttn_);
    if (!maskCache_) {
        b_.alloc(s_.seq * s_.seq * 4, sAttn_);  // the float attention mask, cached for good
        maskCache_ = true;
    }
    L.xmid = b_.alloc(A_, sAct_);
    L.ln2 = b_.alloc(A_, sMlp_);
    L.m2 = b_.alloc(S, sMlp_);
    L.r2 = b_.alloc(S, sMlp_);
    if (s_.mixedPrecision) L.casts.push_back(b_.alloc(4 * d * d * 2, sMlp_));
    L.fc1 = b_.alloc(4 * A_, sMlp_);
    L.gelu = b_.alloc(4 * A_, sMlp_);
    if (s_.mixedPrecision) L.casts.push_back(b_.alloc(4 * d * d * 2, sMlp_));
    const std::uint64_t fc2 = b_.alloc(A_, sMlp_);
    L.xout = b_.alloc(A_, sAct_);
    b_.free(fc2);
    b_.free(ln1);
    b_.free(oproj);
    if (!keepAll) freeBlockIntermediates(layer);
}

// Checkpointing: the block keeps only its output; everything saved for backward goes now and is
// recomputed (forwardBlock again) right before the block's backward.
void GptTrainingProgram::freeBlockIntermediates(std::uint64_t layer) {
    Layer& L = layers_[layer];
    for (std::uint64_t* t : {&L.gelu, &L.fc1, &L.r2, &L.m2, &L.ln2, &L.xmid, &L.aoutt, &L.lse, &L.aout, &L.qkvt,
                             &L.ain, &L.r1, &L.m1}) {
        b_.free(*t);
        *t = 0;
    }
    for (auto it = L.casts.rbegin(); it != L.casts.rend(); ++it) b_.free(*it);
    L.casts.clear();
}

// A weight's gradient: the first micro-batch creates .grad; later ones compute a temporary and
// add it in place (AccumulateGrad), so the temporary is freed at once.
void GptTrainingProgram::grad(std::size_t param) {
    const std::uint64_t id = b_.alloc(paramBytes(param), sBack_);
    if (accumulating_ && grads_[param] != 0) {
        b_.free(id);
    } else {
        grads_[param] = id;
    }
}

// Bias gradients reduce over B·T rows through a scratch twice the output's size plus a tiny
// partials buffer (out/32 floats).
void GptTrainingProgram::biasGradScratch(std::uint64_t outFeatures) {
    const std::uint64_t big = b_.alloc(2 * BT_ * outFeatures * act_, sBack_);
    const std::uint64_t small = b_.alloc(outFeatures * 4 / 128, sBack_);
    b_.free(small);
    b_.free(big);
}

void GptTrainingProgram::backwardBlock(std::uint64_t layer, std::uint64_t& residualGrad, std::uint64_t headGrad) {
    if (s_.checkpointing) {
        forwardBlock(layer, true);  // recompute; its fresh output is not needed by the backward
        b_.free(layers_[layer].xout);
        layers_[layer].xout = 0;
    }
    Layer& L = layers_[layer];
    const std::uint64_t d = s_.d;
    const bool last = layer + 1 == s_.layers;
    const std::uint64_t a = b_.alloc(4 * A_, sBack_);
    grad(paramIndex(layer, Fc2W));
    grad(paramIndex(layer, Fc2B));
    biasGradScratch(d);
    b_.free(L.gelu);
    const std::uint64_t gb = b_.alloc(4 * A_, sBack_);
    b_.free(a);
    b_.free(L.fc1);
    const std::uint64_t c = b_.alloc(A_, sBack_);
    grad(paramIndex(layer, Fc1W));
    grad(paramIndex(layer, Fc1B));
    biasGradScratch(4 * d);
    b_.free(gb);
    b_.free(L.ln2);
    const std::uint64_t e = b_.alloc(A_, sBack_);
    grad(paramIndex(layer, Ln2W));
    grad(paramIndex(layer, Ln2B));
    b_.free(c);
    b_.free(L.xmid);
    b_.free(L.m2);
    b_.free(L.r2);
    if (last) {
        // The residual stream's gradient: made once out of place, then accumulated in place.
        residualGrad = b_.alloc(A_, sBack_);
        b_.free(headGrad);
    }
    b_.free(e);
    const std::uint64_t h = b_.alloc(A_, sBack_);
    const std::uint64_t i = b_.alloc(A_, sBack_);
    grad(paramIndex(layer, OutW));
    grad(paramIndex(layer, OutB));
    biasGradScratch(d);
    b_.free(h);
    b_.free(L.aoutt);
    // Memory-efficient attention backward.
    std::uint64_t j[5];
    for (auto& t : j) t = b_.alloc(A_, sBack_);
    const std::uint64_t lseBytes = s_.batch * s_.heads * ((s_.seq + 31) / 32 * 32) * 4;
    const std::uint64_t k1 = b_.alloc(lseBytes, sBack_);
    const std::uint64_t k2 = b_.alloc(lseBytes, sBack_);
    b_.free(k1);
    b_.free(j[4]);
    const std::uint64_t l = b_.alloc(A_ + 16 * d, sBack_);
    b_.free(k2);
    b_.free(l);
    b_.free(j[0]);
    b_.free(i);
    if (layer == 0 && mask_ != 0) {
        b_.free(mask_);  // the last user of the step's mask is block 0's attention
        mask_ = 0;
    }
    b_.free(L.qkvt);
    b_.free(L.lse);
    b_.free(L.aout);
    // Head split/transposes of dq, dk, dv, then their concatenation.
    std::uint64_t m[6];
    m[0] = b_.alloc(A_, sBack_); b_.free(j[3]);
    m[1] = b_.alloc(A_, sBack_); b_.free(j[2]);
    m[2] = b_.alloc(A_, sBack_); b_.free(j[1]);
    m[3] = b_.alloc(A_, sBack_); b_.free(m[0]);
    m[4] = b_.alloc(A_, sBack_); b_.free(m[1]);
    m[5] = b_.alloc(A_, sBack_); b_.free(m[2]);
    const std::uint64_t n1 = b_.alloc(3 * A_, sBack_); b_.free(m[3]);
    const std::uint64_t n2 = b_.alloc(3 * A_, sBack_); b_.free(m[4]); b_.free(n2);
    const std::uint64_t n3 = b_.alloc(3 * A_, sBack_); b_.free(m[5]); b_.free(n3);
    const std::uint64_t n4 = b_.alloc(3 * A_, sBack_); b_.free(n1);
    grad(paramIndex(layer, InB));
    {
        const std::uint64_t big = b_.alloc(2 * BT_ * 3 * d * act_, sBack_);
        const std::uint64_t small = b_.alloc(3 * d * 4 / 128, sBack_);
        b_.free(small);
        b_.free(big);
    }
    grad(paramIndex(layer, InW));
    const std::uint64_t o = b_.alloc(A_, sBack_);
    b_.free(n4);
    b_.free(L.ain);
    const std::uint64_t p = b_.alloc(A_, sBack_);
    grad(paramIndex(layer, Ln1W));
    grad(paramIndex(layer, Ln1B));
    const std::uint64_t q = b_.alloc(A_, sBack_);
    b_.free(q);
    b_.free(o);
    b_.free(layer == 0 ? emb_ : layers_[layer - 1].xout);
    if (layer == 0) emb_ = 0; else layers_[layer - 1].xout = 0;
    b_.free(L.m1);
    b_.free(L.r1);
    b_.free(p);
    for (auto it = L.casts.rbegin(); it != L.casts.rend(); ++it) b_.free(*it);
    L.casts.clear();
}

void GptTrainingProgram::microBatch(std::uint64_t step, std::uint64_t micro) {
    const std::uint64_t V = s_.vocab;
    // idx = torch.randint(...): the new batch is made before the old one is dropped.
    const std::uint64_t idx = b_.alloc(BT_ * 8, sAct_);
    if (idx_ != 0) b_.free(idx_);
    idx_ = idx;
    b_.begin("forward");
    const std::uint64_t maskFull = b_.alloc(s_.seq * s_.seq * 4, sAct_);
    mask_ = b_.alloc(s_.seq * s_.seq * 4, sAct_);
    b_.free(maskFull);
    emb_ = b_.alloc(A_, sAct_);
    for (std::uint64_t l = 0; l < s_.layers; ++l) forwardBlock(l, !s_.checkpointing);
    // Logits in the compute dtype; cross-entropy's log_softmax in fp32.
    logits_ = b_.alloc(BT_ * V * act_, sHead_);
    const std::uint64_t lsm = b_.alloc(BT_ * V * 4, sHead_);
    loss_ = b_.alloc(4, sHead_);
    const std::uint64_t l2 = b_.alloc(4, sHead_);
    lossScratch_ = b_.alloc(4, sHead_);
    b_.end("forward");

    b_.begin("backward");
    const std::uint64_t g1 = b_.alloc(BT_ * V * 4, sBack_);
    b_.free(l2);
    const std::uint64_t g2 = b_.alloc(BT_ * V * act_, sBack_);
    b_.free(g1);
    b_.free(lsm);
    grad(params_.size() - 1);  // head weight
    if (!workspaceBackward_) {
        b_.alloc(kCublasWorkspace, sWs_);  // the autograd thread's own cuBLAS handle
        workspaceBackward_ = true;
    }
    const std::uint64_t headGrad = b_.alloc(A_, sBack_);
    b_.free(g2);
    b_.free(layers_[s_.layers - 1].xout);
    layers_[s_.layers - 1].xout = 0;
    std::uint64_t residual = 0;
    for (std::uint64_t l = s_.layers; l-- > 0;) backwardBlock(l, residual, headGrad);
    // Embedding backward: index sort (cub) scratch, then the dense weight gradient.
    const std::uint64_t tok8 = BT_ * 8;
    const std::uint64_t e1 = b_.alloc(tok8, sBack_), e2 = b_.alloc(tok8, sBack_), e3 = b_.alloc(tok8, sBack_);
    const std::uint64_t s1 = b_.alloc(scaled(83455, BT_), sBack_);
    b_.free(s1);
    b_.free(e3);
    grad(0);
    const std::uint64_t e4 = b_.alloc(tok8, sBack_), e5 = b_.alloc(8, sBack_), e6 = b_.alloc(tok8, sBack_);
    const std::uint64_t s2 = b_.alloc(scaled(1279, BT_), sBack_);
    b_.free(s2);
    b_.free(e6);
    const std::uint64_t e7 = b_.alloc(tok8, sBack_), e8 = b_.alloc(tok8, sBack_);
    const std::uint64_t s3 = b_.alloc(scaled(1279, BT_), sBack_);
    b_.free(s3);
    const std::uint64_t e9 = b_.alloc(8, sBack_);
    const std::uint64_t s4 = b_.alloc(scaled(36040, BT_), sBack_);
    const std::uint64_t s5 = b_.alloc(scaled(13'839'360, BT_), sBack_);
    for (std::uint64_t t : {s5, s4, e9, e8, e7, e5, e4, e2, e1}) b_.free(t);
    b_.free(residual);
    b_.free(lossScratch_);
    b_.end("backward");
    (void)step;
    if (micro + 1 < s_.accumulation) {
        // `del logits, loss` before the next micro-batch; grads stay and accumulate.
        b_.free(logits_);
        b_.free(loss_);
        logits_ = loss_ = 0;
        accumulating_ = true;
    }
}

void GptTrainingProgram::optimizerStep(bool first) {
    b_.begin("optimizer step");
    const std::size_t n = params_.size();
    if (s_.adamw) {
        if (first) {  // exp_avg and exp_avg_sq, created lazily at the first step
            adamM_.assign(n, 0);
            adamV_.assign(n, 0);
            for (std::size_t i = 0; i < n; ++i) {
                adamM_[i] = b_.alloc(paramBytes(i), sOpt_);
                adamV_[i] = b_.alloc(paramBytes(i), sOpt_);
            }
        }
        // foreach: one temporary list like the parameters (exp_avg_sq.sqrt() / ...).
        std::vector<std::uint64_t> temp;
        for (std::size_t i = 0; i < n; ++i) temp.push_back(b_.alloc(paramBytes(i), sOpt_));
        for (auto it = temp.rbegin(); it != temp.rend(); ++it) b_.free(*it);
    }
    b_.end("optimizer step");
    // zero_grad(set_to_none=True), in parameter order.
    for (std::size_t i = 0; i < n; ++i) {
        if (grads_[i] != 0) b_.free(grads_[i]);
        grads_[i] = 0;
    }
    accumulating_ = false;
    b_.free(logits_);
    b_.free(loss_);
    logits_ = loss_ = 0;
}

void GptTrainingProgram::emit() {
    layers_.assign(s_.layers, Layer{});
    b_.begin("model.to(cuda)");
    allocParams();
    b_.end("model.to(cuda)");
    for (std::uint64_t step = 0; step < s_.steps; ++step) {
        b_.begin("step " + std::to_string(step + 1));
        for (std::uint64_t micro = 0; micro < s_.accumulation; ++micro) microBatch(step, micro);
        optimizerStep(step == 0);
        b_.end("step " + std::to_string(step + 1));
    }
    // Leaving the training function: the optimizer (its states, in order), then the model
    // (parameters last to first), then the last batch.
    for (std::size_t i = 0; i < adamM_.size(); ++i) {
        b_.free(adamM_[i]);
        b_.free(adamV_[i]);
    }
    for (std::size_t i = params_.size(); i-- > 0;) b_.free(params_[i]);
    if (idx_ != 0) b_.free(idx_);
}

}  // namespace allocscope::alloc
