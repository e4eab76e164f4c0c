#include "allocator/workloads/CudaGraphsWorkload.h"

#include <algorithm>

#include "allocator/config/AllocatorConfig.h"
#include "allocator/workloads/ProgramBuilder.h"

namespace allocscope::alloc {

std::string CudaGraphsWorkload::summary() const {
    return "a training step captured into a CUDA graph: its memory stays in the graph's private pool";
}

std::string CudaGraphsWorkload::description() const {
    return "PyTorch's whole-network capture recipe for a small MLP trained with Adam. Warm-up: a few eager "
           "training steps on a side stream (Adam's state is created by the first one). Capture: "
           "torch.cuda.graph synchronizes and calls empty_cache(), then routes the capture stream's "
           "allocations to the graph's private pool (begin_allocate_to_pool); the step's activations, "
           "gradients and optimizer temporaries are allocated there, and what the step frees during the "
           "capture goes back to that pool, not to the default one. After the capture the pool keeps "
           "its segments: replaying the graph allocates nothing, and the static outputs and gradients "
           "stay live in it. Between replays, eager code on the default stream (loading the next batch, "
           "an evaluation under no_grad) cannot use the pool's cached free blocks and gets segments of "
           "its own. At the end the static outputs and gradients are dropped, the graph is reset "
           "(release_pool) and empty_cache() returns the pool's segments to the driver. capture=false "
           "runs the same steps eagerly on the default stream, for comparison.";
}

std::vector<ParamSpec> CudaGraphsWorkload::params() const {
    return {
        ParamSpec::integer("layers", 4, 1, 1000, "linear layers of the model"),
        ParamSpec::integer("weight_mb", 16, 1, 1 << 16,
                           "each layer's weight (MiB); its gradient and Adam's two states are as large"),
        ParamSpec::integer("act_mb", 32, 1, 1 << 16, "each layer's activation for one batch (MiB)"),
        ParamSpec::integer("input_mb", 8, 1, 1 << 16, "one input batch (MiB)"),
        ParamSpec::integer("warmup", 3, 0, 1000, "eager warm-up steps on a side stream before the capture"),
        ParamSpec::integer("replays", 6, 0, 100000, "training steps after the capture (graph replays)"),
        ParamSpec::integer("eval_every", 2, 0, 100000,
                           "an eager evaluation (no_grad, default stream) after every N steps; 0: never"),
        ParamSpec::boolean("capture", true,
                           "capture the step into a CUDA graph; false: every step runs eagerly on the default stream"),
        ParamSpec::boolean("reset", true,
                           "at the end drop the static outputs and gradients and reset the graph (release its pool)"),
        ParamSpec::boolean("empty_cache", true, "call empty_cache() at the very end"),
    };
}

GeneratedProgram CudaGraphsWorkload::generate(const WorkloadParams& params, std::uint64_t /*seed*/) const {
    ProgramBuilder b("train_graphed.py");
    const std::uint32_t sWeight = b.stack("__init__", 12, "build_model", 40);
    const std::uint32_t sData = b.stack("next_batch", 25, "main", 61);
    const std::uint32_t sAct = b.stack("forward", 18, "train_step", 48);
    const std::uint32_t sLoss = b.stack("mse_loss", 31, "train_step", 49);
    const std::uint32_t sGrad = b.stack("backward", 266, "train_step", 50);
    const std::uint32_t sAdam = b.stack("_init_group", 160, "train_step", 51);
    const std::uint32_t sAdamTmp = b.stack("_multi_tensor_adam", 594, "train_step", 51);
    const std::uint32_t sEval = b.stack("forward", 18, "evaluate", 56);
    const std::uint32_t sMetric = b.stack("mse_loss", 31, "evaluate", 57);

    const auto layers = static_cast<std::size_t>(params.getInt("layers"));
    const std::uint64_t weight = static_cast<std::uint64_t>(params.getInt("weight_mb")) * kMiB;
    const std::uint64_t act = static_cast<std::uint64_t>(params.getInt("act_mb")) * kMiB;
    const std::uint64_t input = static_cast<std::uint64_t>(params.getInt("input_mb")) * kMiB;
    // A bias is one row of its layer's weight (fp32 out_features); the loss a fp32 scalar. Both
    // are small-pool requests, so the small pools take part too.
    const std::uint64_t bias = std::max<std::uint64_t>(weight / 1024, 512);
    const std::uint64_t scalar = 4;
    const std::int64_t warmup = params.getInt("warmup");
    const std::int64_t replays = params.getInt("replays");
    const std::int64_t evalEvery = params.getInt("eval_every");
    const bool capture = params.getBool("capture");

    // The model, its parameters and the static input live on the default stream.
    b.begin("build model");
    std::vector<std::uint64_t> paramsIds;  // weight, bias per layer
    std::vector<std::uint64_t> paramSizes;
    for (std::size_t l = 0; l < layers; ++l) {
        paramsIds.push_back(b.alloc(weight, sWeight));
        paramSizes.push_back(weight);
        paramsIds.push_back(b.alloc(bias, sWeight));
        paramSizes.push_back(bias);
    }
    // The graph reads its input from a static tensor that every new batch is copied into.
    if (capture) b.alloc(input, sData);
    b.end("build model");

    std::vector<std::uint64_t> grads;      // one per parameter while set, empty after zero_grad(set_to_none)
    std::vector<std::uint64_t> adamState;  // exp_avg, exp_avg_sq per parameter, made by the first step()
    std::uint64_t output = 0;              // y_pred and loss of the last step
    std::uint64_t loss = 0;

    const auto zeroGrad = [&] {  // optimizer.zero_grad(set_to_none=True)
        for (std::uint64_t g : grads) b.free(g);
        grads.clear();
    };

    // One training step on `stream`: forward (activations saved for backward), loss, backward
    // (gradients of the activations flow down, parameter gradients are made, saved activations are
    // released), Adam (state on first use, the foreach implementation's temporaries).
    const auto trainStep = [&](StreamId stream) {
        std::vector<std::uint64_t> acts;
        for (std::size_t l = 0; l < layers; ++l) acts.push_back(b.alloc(act, sAct, stream));
        output = acts.back();
        loss = b.alloc(scalar, sLoss, stream);
        std::uint64_t flowing = b.alloc(act, sGrad, stream);  // d loss / d output
        const bool makeGrads = grads.empty();
        if (makeGrads) grads.resize(paramsIds.size());
        for (std::size_t l = layers; l-- > 0;) {
            if (makeGrads) {
                grads[2 * l] = b.alloc(weight, sGrad, stream);
                grads[2 * l + 1] = b.alloc(bias, sGrad, stream);
            }
            if (l > 0) {
                const std::uint64_t below = b.alloc(act, sGrad, stream);
                b.free(flowing);
                flowing = below;
                b.free(acts[l - 1]);  // layer l's saved input is no longer needed
            }
        }
        b.free(flowing);
        if (adamState.empty()) {
            for (std::uint64_t size : paramSizes) {
                adamState.push_back(b.alloc(size, sAdam, stream));
                adamState.push_back(b.alloc(size, sAdam, stream));
            }
        }
        std::vector<std::uint64_t> temps;
        for (std::uint64_t size : paramSizes) temps.push_back(b.alloc(size, sAdamTmp, stream));
        for (std::uint64_t t : temps) b.free(t);
    };
    // Python drops the step's outputs when the next step rebinds them; modelled at the step's end.
    const auto dropOutputs = [&] {
        if (output != 0) b.free(output);
        if (loss != 0) b.free(loss);
        output = loss = 0;
    };

    // Eager evaluation under no_grad on the default stream: only two activations live at a time.
    const auto evaluate = [&] {
        b.begin("eager eval");
        std::uint64_t x = b.alloc(input, sData);
        for (std::size_t l = 0; l < layers; ++l) {
            const std::uint64_t y = b.alloc(act, sEval);
            b.free(x);
            x = y;
        }
        const std::uint64_t metric = b.alloc(scalar, sMetric);
        b.free(x);
        b.free(metric);
        b.end("eager eval");
    };

    if (capture) {
        // PyTorch's recipe warms up on a side stream so that lazy state (Adam's) and the kernels'
        // workspaces exist before the capture; these blocks are cached for that stream.
        for (std::int64_t i = 0; i < warmup; ++i) {
            b.begin("warm-up step");
            zeroGrad();
            trainStep(kSideStream);
            dropOutputs();
            b.end("warm-up step");
        }
        b.begin("capture");
        zeroGrad();  // the captured backward makes the gradients inside the graph's pool
        // torch.cuda.graph.__enter__: synchronize, empty_cache(), then capture_begin, whose
        // beginAllocateToPool creates the graph's pool with one use (c10's create_or_incref_pool).
        b.synchronize();
        b.emptyCache();
        b.poolOp(OpKind::BeginAllocateToPool, kGraphPool, kOpCapture, kCaptureStream);
        trainStep(kCaptureStream);  // static outputs, gradients: live in the pool after the capture
        b.poolOp(OpKind::EndAllocateToPool, kGraphPool);
        b.end("capture");
        for (std::int64_t r = 1; r <= replays; ++r) {
            // The next batch arrives on the default stream and is copied into the static input.
            b.begin("load batch");
            b.free(b.alloc(input, sData));
            b.end("load batch");
            // g.replay() launches the captured kernels on the captured addresses: no allocator call.
            b.begin("replay");
            b.end("replay");
            if (evalEvery > 0 && r % evalEvery == 0) evaluate();
        }
    } else {
        for (std::int64_t i = 1; i <= warmup + replays; ++i) {
            b.begin("train step");
            const std::uint64_t batch = b.alloc(input, sData);
            zeroGrad();
            trainStep(kComputeStream);
            dropOutputs();
            b.free(batch);
            b.end("train step");
            if (i > warmup && evalEvery > 0 && (i - warmup) % evalEvery == 0) evaluate();
        }
    }

    if (params.getBool("reset")) {
        const char* phase = capture ? "reset graph" : "drop outputs";
        b.begin(phase);
        dropOutputs();
        zeroGrad();
        // g.reset(): the graph's use of its pool ends; empty_cache() may now free its segments.
        if (capture) b.poolOp(OpKind::ReleasePool, kGraphPool);
        b.end(phase);
    }
    if (params.getBool("empty_cache")) b.emptyCache();
    return b.take();
}

}  // namespace allocscope::alloc
