"""Record real PyTorch snapshots of programs that allocate from private memory pools, with PyTorch's
ground truth (issue 36: held-out private-pool programs).

Usage: python3 pools_tracegen.py RESULTDIR [--tar FILE] [--deadline SECONDS] [--lanes N] [--programs P,Q]
           parent: runs every program x config, each in a fresh child process (N at a time on the
           one GPU: each process has its own caching allocator, and none comes near the device's
           memory); after each child it (re)writes FILE (a .tar.gz of RESULTDIR)
       python3 pools_tracegen.py --child PROGRAM CONFIGNAME RESULTDIR
           child: one program under one config (PYTORCH_CUDA_ALLOC_CONF comes from the environment)

Each child sets nothing before `import torch` but what the parent put in its environment, starts
`torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")` before the first
allocation, runs the program, and right after its last op writes RESULTDIR/P__C.pickle
(torch.cuda.memory._snapshot(), file names in stack frames shortened to their base name, pickle
protocol 4) and RESULTDIR/P__C.json (memory_stats, memory_summary, the config, the memory fraction,
total memory), then leaves with os._exit(0), so nothing is freed after the program's last op.

Programs:
  cudagraph_train       a 3-layer MLP training step (forward, MSE loss, backward, AdamW(capturable=True)
                        step) captured whole with torch.cuda.graph, replayed 10 times with eager side
                        allocations (temporaries, a sliding window of kept tensors, an eager no-grad
                        forward) between replays; then the graph, its static outputs and the grads are
                        deleted, more eager allocations, torch.cuda.empty_cache(), two last allocations
  cudagraph_train_frac  the same under set_per_process_memory_fraction(400 MiB / total) with larger
                        side allocations: allocation retries (free_cached_blocks, release_cached_blocks)
                        and caught OOMs while the graph's private pool holds memory
  shared_pool_graphs    two graphs captured into one private pool (g2 with pool=g1.pool(); g2 reads
                        g1's static output), replayed alternately with side allocations; g1 deleted
                        first, then g2, then empty_cache()
  compile_gpt2          torch.compile(mode="reduce-overhead") on a tiny GPT-2 (transformers, random
                        init), 5 training steps (AdamW, eager) of the same shape
  compile_gpt2_infer    the same model compiled for inference (torch.no_grad), 6 steps
  mempool_generation    a tiny LlamaForCausalLM (random init) generating inside
                        torch.cuda.use_mem_pool(torch.cuda.MemPool()), 3 prompts; then the outputs and
                        the pool are deleted and empty_cache() is called
  three_graphs_shared   three graphs captured into one pool (g2, g3 with pool=g1.pool()), a cached
                        default-pool segment left free only before g3's capture (so g3's empty_cache()
                        in graphs.py __enter__ releases it, g2's releases nothing); replays; g2 deleted,
                        empty_cache(), then g1 and g3, empty_cache()
  mempool_twice         one MemPool entered twice with use_mem_pool, eager allocations in between; an
                        empty_cache() with the pool alive; the pool deleted while one of its tensors
                        lives (its destructor releases the free segments), that tensor freed, then
                        empty_cache() releases the pool's last segment
  graph_stream_pools    captures on a stream of the program's own (stream=s) that also runs eager
                        work: g1 and g2 each with a pool of their own, eager allocations on s, then g3
                        into g2's pool; g1 deleted and empty_cache(), then the rest
  graphed_callables     torch.cuda.make_graphed_callables on two MLP halves (one pool shared by their
                        forward and backward graphs), 8 training steps with eager SGD and side
                        allocations; then the callables are deleted, empty_cache(), a last allocation
  graph_reset           g captured, replayed with side allocations, g.reset() (its pool becomes
                        freeable), eager allocations, g captured again (a new pool), replays,
                        empty_cache() with g alive, then g deleted and empty_cache()
  capture_fork          a capture that forks to a second stream and joins back (the fork's
                        allocations go to the capture's pool); eager work on that stream between
                        replays; the graph deleted, empty_cache()
  compile_shapes        torch.compile(mode="reduce-overhead") on an MLP, inference at three batch
                        sizes, each twice (graph trees record one graph per shape in one pool), then
                        the first size again
  mempool_retry         under set_per_process_memory_fraction(300 MiB / total): a MemPool holds free
                        cached segments while eager allocations retry and one OOMs; the pool deleted,
                        the allocation retried
  record_stream_capture tensors used on a side stream (record_stream) freed while their kernels are
                        queued, then a capture: __enter__'s empty_cache() completes the pending frees;
                        inside the capture a tensor recorded on another stream is freed too
  two_stream_captures   g1 captured on a stream s1 of the program's own, g2 on s2 into g1's pool, g3
                        on s2 with a pool of its own; eager work on s1 and s2 between replays; g1
                        deleted, empty_cache(), then the rest
  graphed_single        make_graphed_callables on one module (a forward and a backward capture), 6
                        training steps with side allocations, then deleted and empty_cache()
  mempool_nested        two MemPools, the second's use_mem_pool scope inside the first's; the inner
                        pool deleted first with a tensor of it alive, empty_cache(), then the outer
  compile_train_shapes  torch.compile(mode="reduce-overhead") training of an MLP (eager AdamW) at two
                        batch sizes, alternating, 6 steps
  compile_many_shapes   torch.compile(mode="reduce-overhead") inference of an MLP at seven batch
                        sizes, then the first three again (graph trees record one graph per shape)
  graph_in_mempool      a capture into a user MemPool (pool=MemPool().id), eager use_mem_pool
                        allocations into the same pool between replays; the graph deleted, then
                        the pool, empty_cache()
  capture_fork_two      a capture forking to two streams s2 and s3 and joining back; eager work on
                        s2 and s3 between replays
  graph_retry           under set_per_process_memory_fraction(350 MiB / total): a graph and a live
                        MemPool both holding free cached segments; the graph deleted, eager
                        allocations that need the retry (which frees the graph's pool, not the
                        MemPool's)
  graph_reset_shared    g1 and g2 captured into one pool; g1.reset() (the pool keeps g2's use),
                        empty_cache(); then g2.reset(), eager allocations, empty_cache()
  mempool_use_on_oom    under set_per_process_memory_fraction(300 MiB / total): a
                        MemPool(use_on_oom=True) holding free cached blocks that default-pool
                        allocations fall back to when they would OOM
  capture_record_fork   inside a capture, a tensor of the capture stream used on a forked stream
                        (record_stream) and freed before the join; eager record_stream frees after
  empty_cache_in_scope  torch.cuda.empty_cache() called inside a use_mem_pool scope, with free
                        blocks in the MemPool and the default pool; then outside it, then after
                        the pool is deleted
  compile_gpt2_lengths  torch.compile(mode="reduce-overhead") training of the tiny GPT-2 at sequence
                        lengths 32 and 64, alternating, 6 steps (eager AdamW)
  amp_graph_train       a whole bf16-autocast training step (AdamW(capturable=True)) captured with
                        torch.cuda.graph and replayed 8 times with eager side allocations
  compile_two_modules   two modules compiled with mode="reduce-overhead" called in turn with eager
                        work between them, inference, 5 steps
  mempool_activations   an MLP's forward run inside use_mem_pool (its activations in the pool), the
                        backward outside it, 6 steps; the pool deleted while gradients live
  compile_empty_cache   torch.compile(mode="reduce-overhead") training of an MLP with
                        torch.cuda.empty_cache() after every step, 5 steps
  mempool_side_stream   use_mem_pool scope whose tensors are made and used on a side stream
                        (record_stream on the default one), freed while queued; the pool deleted
  pool_handle_three     three graphs sharing torch.cuda.graph_pool_handle(), eager work between
                        the captures and the replays; deleted middle, first, last, with
                        empty_cache() between
"""
import json, os, random, subprocess, sys, threading, time
from concurrent.futures import ThreadPoolExecutor

# The OOM recorder's snapshot helpers (this folder is on sys.path when the script runs).
from oom_tracegen import shorten_frames, write_tar

MB = 1 << 20

CONFS = {"default": "", "msplit128": "max_split_size_mb:128", "expandable": "expandable_segments:True"}
JOBS = [  # slow ones first
    ("compile_gpt2", "default"), ("compile_gpt2", "expandable"),
    ("compile_gpt2_infer", "default"), ("compile_gpt2_infer", "expandable"),
    ("cudagraph_train", "default"), ("cudagraph_train", "msplit128"), ("cudagraph_train", "expandable"),
    ("shared_pool_graphs", "default"), ("shared_pool_graphs", "expandable"),
    ("mempool_generation", "default"), ("mempool_generation", "expandable"),
    ("cudagraph_train_frac", "default"), ("cudagraph_train_frac", "msplit128"),
    ("cudagraph_train_frac", "expandable"),
]
# The second held-out set (tests/data/pools-heldout2): `--programs` picks them.
JOBS += [(p, c) for p in ("three_graphs_shared", "mempool_twice", "graph_stream_pools")
         for c in ("default", "expandable")]

# The third held-out set (tests/data/pools-heldout3).
JOBS += [(p, c) for p in ("compile_shapes", "graphed_callables", "graph_reset", "capture_fork",
                          "mempool_retry", "record_stream_capture")
         for c in ("default", "expandable", "msplit128")]

# The fourth held-out set (tests/data/pools-heldout4).
JOBS += [(p, c) for p in ("compile_train_shapes", "two_stream_captures", "graphed_single", "mempool_nested")
         for c in ("default", "expandable", "msplit128")]

# The fifth held-out set (tests/data/pools-heldout5).
JOBS += [(p, c) for p in ("compile_many_shapes", "graph_in_mempool", "capture_fork_two", "graph_retry")
         for c in ("default", "expandable", "msplit128")]

# The sixth held-out set (tests/data/pools-heldout6).
JOBS += [(p, c) for p in ("graph_reset_shared", "mempool_use_on_oom", "capture_record_fork", "empty_cache_in_scope")
         for c in ("default", "expandable", "msplit128")]

# The seventh held-out set (tests/data/pools-heldout7).
JOBS += [(p, c) for p in ("compile_gpt2_lengths", "compile_two_modules", "amp_graph_train", "mempool_activations")
         for c in ("default", "expandable", "msplit128")]

# The eighth held-out set (tests/data/pools-heldout8).
JOBS += [(p, c) for p in ("compile_empty_cache", "mempool_side_stream", "pool_handle_three")
         for c in ("default", "expandable", "msplit128")]


def finish(torch, base, info, t0):
    import pickle
    t1 = time.time()
    snap = torch.cuda.memory._snapshot()
    shorten_frames(snap, set())
    with open(base + ".pickle", "wb") as f:
        pickle.dump(snap, f, protocol=4)
    actions = {}
    for entries in snap.get("device_traces", []):
        for e in entries:
            actions[e["action"]] = actions.get(e["action"], 0) + 1
    info.update({
        "seconds": t1 - t0,
        "mem_get_info_at_end": list(torch.cuda.mem_get_info(0)),
        "trace_actions": actions,
        "trace_entries": sum(actions.values()),
        "pickle_bytes": os.path.getsize(base + ".pickle"),
        "memory_stats": dict(torch.cuda.memory_stats()),
        "summary": torch.cuda.memory_summary(),
    })
    with open(base + ".json", "w") as f:
        json.dump(info, f, indent=1)
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)


# ------------------------------------------------------------------------------------- programs

def mlp(torch, dev):
    nn = torch.nn
    return nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                         nn.Linear(2048, 512)).to(dev)


def p_cudagraph_train(torch, dev, rng, info, frac=False):
    model = mlp(torch, dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
    loss_fn = torch.nn.MSELoss()
    x = torch.randn(256, 512, device=dev)
    t = torch.randn(256, 512, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), t)
            loss.backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    del loss
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_y = model(x)
        static_loss = loss_fn(static_y, t)
        static_loss.backward()
        opt.step()
    keep, losses, ooms = [], [], 0
    big = (20, 120) if frac else (1, 24)
    for i in range(10):
        try:
            x.copy_(torch.randn(256, 512, device=dev))
            t.copy_(torch.randn(256, 512, device=dev))
            g.replay()
            losses.append(static_loss.item())
            tmp = torch.empty(rng.randint(1, 64) * MB, dtype=torch.uint8, device=dev)
            keep.append(torch.empty(rng.randint(*big) * MB, dtype=torch.uint8, device=dev))
            if len(keep) > 3:
                keep.pop(rng.randrange(len(keep)))
            with torch.no_grad():
                ev = model(torch.randn(rng.choice([64, 512, 1024]), 512, device=dev))
            del tmp, ev
        except torch.OutOfMemoryError:
            ooms += 1
            tmp = ev = None
    del g, static_y, static_loss
    opt.zero_grad(set_to_none=True)
    for i in range(4):
        try:
            keep.append(torch.empty(rng.randint(*big) * MB, dtype=torch.uint8, device=dev))
            keep.pop(0)
        except torch.OutOfMemoryError:
            ooms += 1
    torch.cuda.empty_cache()
    last = [torch.empty(3 * MB, device=dev), torch.empty(30 * MB, dtype=torch.uint8, device=dev)]
    info["program_result"] = {"losses": losses, "ooms_caught": ooms}
    return last, keep, model, opt


def p_cudagraph_train_frac(torch, dev, rng, info):
    return p_cudagraph_train(torch, dev, rng, info, frac=True)


def p_shared_pool_graphs(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(dev)
    b = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 256)).to(dev)
    x = torch.randn(128, 1024, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):
            b(a(x))
    torch.cuda.current_stream().wait_stream(s)
    g1, g2 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.no_grad():
        with torch.cuda.graph(g1):
            h = a(x)
        with torch.cuda.graph(g2, pool=g1.pool()):
            y = b(h)
    keep, sums = [], []
    for i in range(12):
        x.copy_(torch.randn(128, 1024, device=dev))
        g1.replay()
        if i % 3 != 2:
            g2.replay()
        sums.append(float(y.sum().item()))
        tmp = torch.empty(rng.randint(1, 40) * MB, dtype=torch.uint8, device=dev)
        keep.append(h.clone())
        if len(keep) > 4:
            keep.pop(0)
        del tmp
    del g1, h
    for i in range(3):
        keep.append(torch.empty(rng.randint(2, 30) * MB, dtype=torch.uint8, device=dev))
        g2.replay()
    del g2, y
    keep.append(torch.empty(5 * MB, dtype=torch.uint8, device=dev))
    torch.cuda.empty_cache()
    keep.append(torch.empty(7 * MB, dtype=torch.uint8, device=dev))
    info["program_result"] = {"sums": sums}
    return keep, a, b


GPT2 = dict(vocab_size=4096, n_positions=128, n_embd=256, n_layer=2, n_head=4,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


def p_compile_gpt2(torch, dev, rng, info, train=True):
    from transformers import GPT2Config, GPT2LMHeadModel
    import transformers
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(**GPT2)).to(dev)
    info["program_params"] = {"gpt2": GPT2, "transformers_version": transformers.__version__,
                              "train": train}
    f = torch.compile(model, mode="reduce-overhead")
    vals = []
    if train:
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for step in range(5):
            torch.compiler.cudagraph_mark_step_begin()
            idx = torch.randint(0, GPT2["vocab_size"], (8, 64), device=dev)
            out = f(input_ids=idx, labels=idx)
            out.loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            vals.append(float(out.loss.item()))
            del out, idx
        keep = [opt]
    else:
        model.eval()
        with torch.no_grad():
            for step in range(6):
                torch.compiler.cudagraph_mark_step_begin()
                idx = torch.randint(0, GPT2["vocab_size"], (8, 64), device=dev)
                out = f(input_ids=idx)
                vals.append(float(out.logits.float().mean().item()))
                del out, idx
        keep = []
    info["program_result"] = {"values": vals}
    return keep, model, f


def p_compile_gpt2_infer(torch, dev, rng, info):
    return p_compile_gpt2(torch, dev, rng, info, train=False)


LLAMA = dict(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)


def p_mempool_generation(torch, dev, rng, info):
    from transformers import LlamaConfig, LlamaForCausalLM
    import transformers, gc
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**LLAMA)).to(dev).eval()
    info["program_params"] = {"llama": LLAMA, "transformers_version": transformers.__version__}
    pool = torch.cuda.MemPool()
    outs = []
    with torch.no_grad(), torch.cuda.use_mem_pool(pool):
        for bsz, plen in ((2, 16), (4, 24), (1, 40)):
            ids = torch.randint(3, LLAMA["vocab_size"], (bsz, plen), device=dev)
            outs.append(model.generate(ids, max_new_tokens=24, do_sample=False, pad_token_id=0,
                                       eos_token_id=None))
            del ids
    info["program_result"] = {"lengths": [list(o.shape) for o in outs]}
    mid = torch.empty(9 * MB, dtype=torch.uint8, device=dev)
    del outs
    gc.collect()
    del pool
    gc.collect()
    torch.cuda.empty_cache()
    last = torch.empty(11 * MB, dtype=torch.uint8, device=dev)
    return model, mid, last


def p_three_graphs_shared(torch, dev, rng, info):
    nn = torch.nn
    mods = [nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev) for _ in range(3)]
    x = torch.randn(256, 1024, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(2):
            h = x
            for m in mods:
                h = m(h)
    torch.cuda.current_stream().wait_stream(s)
    gs = [torch.cuda.CUDAGraph() for _ in range(3)]
    outs = []
    with torch.no_grad():
        h = x
        for i, (g, m) in enumerate(zip(gs, mods)):
            if i == 2:
                side = torch.empty(6 * MB, dtype=torch.uint8, device=dev)
                del side  # cached, whole and free: g3's __enter__ empty_cache() releases it
            with torch.cuda.graph(g, pool=gs[0].pool() if i else None):
                h = m(h)
            outs.append(h)
    keep = []
    for i in range(6):
        x.copy_(torch.randn(256, 1024, device=dev))
        for g in gs:
            g.replay()
        keep.append(torch.empty(rng.randint(1, 20) * MB, dtype=torch.uint8, device=dev))
        if len(keep) > 3:
            keep.pop(0)
    g2 = gs.pop(1)
    del g2
    torch.cuda.empty_cache()
    keep.append(torch.empty(4 * MB, dtype=torch.uint8, device=dev))
    del gs, outs, h
    torch.cuda.empty_cache()
    keep.append(torch.empty(9 * MB, dtype=torch.uint8, device=dev))
    return keep, mods, x


def p_mempool_twice(torch, dev, rng, info):
    import gc
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        a = [torch.empty(rng.randint(1, 8) * MB, dtype=torch.uint8, device=dev) for _ in range(6)]
        small = torch.empty(1000, device=dev)
    eager = [torch.empty(24 * MB, dtype=torch.uint8, device=dev)]  # a segment of its own
    eager += [torch.empty(rng.randint(1, 30) * MB, dtype=torch.uint8, device=dev) for _ in range(3)]
    del a[1:4]
    with torch.cuda.use_mem_pool(pool):
        b = [torch.empty(rng.randint(1, 12) * MB, dtype=torch.uint8, device=dev) for _ in range(5)]
        lives = torch.empty(25 * MB, dtype=torch.uint8, device=dev)
        tiny = torch.empty(300, device=dev)
    eager.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    del eager[0]
    torch.cuda.empty_cache()
    del a, b, small, tiny
    del pool
    gc.collect()
    eager.append(torch.empty(40 * MB, dtype=torch.uint8, device=dev))
    del lives
    torch.cuda.empty_cache()
    eager.append(torch.empty(2 * MB, dtype=torch.uint8, device=dev))
    return eager


def p_graph_stream_pools(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    b = nn.Sequential(nn.Linear(1024, 3072), nn.GELU(), nn.Linear(3072, 1024)).to(dev)
    x = torch.randn(192, 1024, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.no_grad():
        with torch.cuda.stream(s):
            for _ in range(2):
                b(a(x))
        g1, g2, g3 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        with torch.cuda.graph(g1, stream=s):
            y1 = a(x)
        with torch.cuda.graph(g2, stream=s):
            y2 = b(x)
        with torch.cuda.stream(s):
            eager = [a(x) for _ in range(2)]
            eager.append(torch.empty(rng.randint(1, 9) * MB, dtype=torch.uint8, device=dev))
        with torch.cuda.graph(g3, pool=g2.pool(), stream=s):
            y3 = a(y2)
    torch.cuda.current_stream().wait_stream(s)
    keep = []
    for i in range(5):
        x.copy_(torch.randn(192, 1024, device=dev))
        g1.replay(); g2.replay(); g3.replay()
        keep.append(torch.empty(rng.randint(1, 16) * MB, dtype=torch.uint8, device=dev))
    del g1, y1
    torch.cuda.empty_cache()
    keep.append(torch.empty(5 * MB, dtype=torch.uint8, device=dev))
    del g2, g3, y2, y3
    torch.cuda.empty_cache()
    keep.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    return keep, eager, a, b


def warm_up(torch, fn, times=1):
    """Runs fn on a side stream of its own, under no_grad, as PyTorch's CUDA-graph notes ask before
    a capture (cuBLAS handles and workspaces, lazy initialisation), then joins it back."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(times):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def p_graphed_callables(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    b = nn.Sequential(nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 256)).to(dev)
    x = torch.randn(128, 512, device=dev, requires_grad=True)
    h = torch.randn(128, 1024, device=dev, requires_grad=True)
    ga, gb = torch.cuda.make_graphed_callables((a, b), ((x,), (h,)))
    opt = torch.optim.SGD(list(a.parameters()) + list(b.parameters()), lr=1e-3)
    losses, keep = [], []
    for step in range(8):
        inp = torch.randn(128, 512, device=dev, requires_grad=True)
        loss = gb(ga(inp)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.item()))
        keep.append(torch.empty(rng.randint(1, 30) * MB, dtype=torch.uint8, device=dev))
        if len(keep) > 3:
            keep.pop(rng.randrange(len(keep)))
        del loss, inp
    del ga, gb
    import gc
    gc.collect()
    torch.cuda.empty_cache()
    keep.append(torch.empty(6 * MB, dtype=torch.uint8, device=dev))
    info["program_result"] = {"losses": losses}
    return keep, a, b, opt


def p_graph_reset(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(1024, 3072), nn.GELU(), nn.Linear(3072, 1024)).to(dev)
    x = torch.randn(256, 1024, device=dev)
    warm_up(torch, lambda: m(x), times=2)
    g = torch.cuda.CUDAGraph()
    keep, sums = [], []
    with torch.no_grad():
        with torch.cuda.graph(g):
            y = m(x)
        for i in range(4):
            g.replay()
            sums.append(float(y.sum().item()))
            keep.append(torch.empty(rng.randint(1, 25) * MB, dtype=torch.uint8, device=dev))
        del y
        g.reset()
        keep += [torch.empty(rng.randint(2, 12) * MB, dtype=torch.uint8, device=dev) for _ in range(3)]
        keep.pop(0)
        with torch.cuda.graph(g):
            y = m(x * 2)
        for i in range(4):
            g.replay()
            sums.append(float(y.sum().item()))
            keep.append(torch.empty(rng.randint(1, 25) * MB, dtype=torch.uint8, device=dev))
            keep.pop(0)
    torch.cuda.empty_cache()
    keep.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    del g, y
    torch.cuda.empty_cache()
    keep.append(torch.empty(5 * MB, dtype=torch.uint8, device=dev))
    info["program_result"] = {"sums": sums}
    return keep, m, x


def p_capture_fork(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    b = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(dev)
    x = torch.randn(192, 1024, device=dev)
    s2 = torch.cuda.Stream()
    warm_up(torch, lambda: a(x) + b(x), times=2)
    g = torch.cuda.CUDAGraph()
    with torch.no_grad():
        with torch.cuda.graph(g):
            cap = torch.cuda.current_stream()
            s2.wait_stream(cap)
            with torch.cuda.stream(s2):
                yb = b(x)
            ya = a(x)
            cap.wait_stream(s2)
            y = ya + yb
    keep, sums = [], []
    for i in range(6):
        x.copy_(torch.randn(192, 1024, device=dev))
        g.replay()
        sums.append(float(y.sum().item()))
        s2.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s2):
            t = torch.empty(rng.randint(1, 20) * MB, dtype=torch.uint8, device=dev)
            keep.append(t * 1)
            del t
        torch.cuda.current_stream().wait_stream(s2)
        if len(keep) > 3:
            keep.pop(0)
    torch.cuda.synchronize()
    del g, y, ya, yb
    torch.cuda.empty_cache()
    keep.append(torch.empty(4 * MB, dtype=torch.uint8, device=dev))
    info["program_result"] = {"sums": sums}
    return keep, a, b, x


def compiled_inference(torch, dev, info, m, width, sizes):
    """torch.compile(mode="reduce-overhead") inference of m at each batch size in turn (graph trees
    record one graph per shape, all in one pool)."""
    f = torch.compile(m, mode="reduce-overhead", dynamic=False)
    vals = []
    with torch.no_grad():
        for bsz in sizes:
            torch.compiler.cudagraph_mark_step_begin()
            out = f(torch.randn(bsz, width, device=dev))
            vals.append(float(out.float().mean().item()))
            del out
    info["program_result"] = {"values": vals}
    return m, f


def p_compile_shapes(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
                      nn.Linear(2048, 512)).to(dev).eval()
    return compiled_inference(torch, dev, info, m, 512, (64, 64, 256, 256, 1024, 1024, 64))


def p_mempool_retry(torch, dev, rng, info):
    import gc
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        held = [torch.empty(rng.randint(20, 60) * MB, dtype=torch.uint8, device=dev) for _ in range(4)]
    del held[:3]  # the pool's segments stay cached: a retry does not release a live MemPool's
    eager, ooms = [], 0
    for i in range(8):
        try:
            eager.append(torch.empty(rng.randint(30, 90) * MB, dtype=torch.uint8, device=dev))
            if len(eager) > 2:
                eager.pop(0)
        except torch.OutOfMemoryError:
            ooms += 1
    try:
        eager.append(torch.empty(200 * MB, dtype=torch.uint8, device=dev))
    except torch.OutOfMemoryError:
        ooms += 1
        del held
        del pool
        gc.collect()
        try:
            eager.append(torch.empty(200 * MB, dtype=torch.uint8, device=dev))
        except torch.OutOfMemoryError:
            ooms += 1
    info["program_result"] = {"ooms_caught": ooms}
    return eager


def p_record_stream_capture(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    x = torch.randn(256, 1024, device=dev)
    side = torch.cuda.Stream()
    with torch.no_grad():
        for i in range(3):
            t = torch.empty(rng.randint(2, 16) * MB, dtype=torch.uint8, device=dev)
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                torch.cuda._sleep(20_000_000)
                t.add_(1)
            t.record_stream(side)
            del t  # pending until side's work ends
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            m(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            cap = torch.cuda.current_stream()
            u = torch.empty(3 * MB, dtype=torch.uint8, device=dev)
            side.wait_stream(cap)
            with torch.cuda.stream(side):
                u.add_(1)
            u.record_stream(side)
            cap.wait_stream(side)
            del u
            y = m(x)
    keep = []
    for i in range(4):
        g.replay()
        keep.append(torch.empty(rng.randint(1, 10) * MB, dtype=torch.uint8, device=dev))
    torch.cuda.synchronize()
    del g, y
    torch.cuda.empty_cache()
    keep.append(torch.empty(2 * MB, dtype=torch.uint8, device=dev))
    return keep, m, x


def p_two_stream_captures(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    b = nn.Sequential(nn.Linear(1024, 3072), nn.GELU(), nn.Linear(3072, 1024)).to(dev)
    x = torch.randn(160, 1024, device=dev)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for s in (s1, s2):
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            b(a(x))
        torch.cuda.current_stream().wait_stream(s)
    g1, g2, g3 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.no_grad():
        with torch.cuda.graph(g1, stream=s1):
            y1 = a(x)
        with torch.cuda.graph(g2, pool=g1.pool(), stream=s2):
            y2 = b(y1)
        side = torch.empty(rng.randint(2, 9) * MB, dtype=torch.uint8, device=dev)
        with torch.cuda.graph(g3, stream=s2):
            y3 = a(x * 3)
    keep = [side]
    for i in range(5):
        x.copy_(torch.randn(160, 1024, device=dev))
        g1.replay(); g2.replay(); g3.replay()
        for s in (s1, s2):
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                keep.append(torch.empty(rng.randint(1, 12) * MB, dtype=torch.uint8, device=dev) + 1)
            torch.cuda.current_stream().wait_stream(s)
        if len(keep) > 5:
            keep.pop(1)
    torch.cuda.synchronize()
    del g1
    torch.cuda.empty_cache()
    keep.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    del g2, g3, y1, y2, y3
    torch.cuda.empty_cache()
    keep.append(torch.empty(5 * MB, dtype=torch.uint8, device=dev))
    return keep, a, b, x


def p_graphed_single(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).to(dev)
    x = torch.randn(96, 512, device=dev, requires_grad=True)
    gm = torch.cuda.make_graphed_callables(m, (x,))
    opt = torch.optim.SGD(m.parameters(), lr=1e-3)
    keep, losses = [], []
    for step in range(6):
        inp = torch.randn(96, 512, device=dev, requires_grad=True)
        loss = gm(inp).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.item()))
        keep.append(torch.empty(rng.randint(1, 24) * MB, dtype=torch.uint8, device=dev))
        if len(keep) > 2:
            keep.pop(0)
        del loss, inp
    del gm
    import gc
    gc.collect()
    torch.cuda.empty_cache()
    keep.append(torch.empty(4 * MB, dtype=torch.uint8, device=dev))
    info["program_result"] = {"losses": losses}
    return keep, m, opt


def p_mempool_nested(torch, dev, rng, info):
    import gc
    outer, inner = torch.cuda.MemPool(), torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(outer):
        a = [torch.empty(rng.randint(1, 10) * MB, dtype=torch.uint8, device=dev) for _ in range(4)]
        with torch.cuda.use_mem_pool(inner):
            b = [torch.empty(rng.randint(1, 10) * MB, dtype=torch.uint8, device=dev) for _ in range(4)]
            bs = torch.empty(2000, device=dev)
        a.append(torch.empty(rng.randint(1, 10) * MB, dtype=torch.uint8, device=dev))
    eager = [torch.empty(rng.randint(1, 20) * MB, dtype=torch.uint8, device=dev) for _ in range(3)]
    lives = b.pop()
    del b, bs
    del inner
    gc.collect()
    eager.append(torch.empty(6 * MB, dtype=torch.uint8, device=dev))
    del lives
    torch.cuda.empty_cache()
    eager.append(torch.empty(7 * MB, dtype=torch.uint8, device=dev))
    del a[1:]
    del outer
    gc.collect()
    torch.cuda.empty_cache()
    eager.append(torch.empty(2 * MB, dtype=torch.uint8, device=dev))
    return eager, a


def p_compile_train_shapes(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).to(dev)
    f = torch.compile(m, mode="reduce-overhead", dynamic=False)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    vals = []
    for bsz in (64, 128, 64, 128, 64, 128):
        torch.compiler.cudagraph_mark_step_begin()
        x = torch.randn(bsz, 512, device=dev)
        loss = f(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        vals.append(float(loss.item()))
        del loss, x
    info["program_result"] = {"values": vals}
    return m, f, opt


def p_compile_many_shapes(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256)).to(dev).eval()
    return compiled_inference(torch, dev, info, m, 256, (16, 48, 96, 200, 333, 512, 1000, 16, 48, 96))


def p_graph_in_mempool(torch, dev, rng, info):
    import gc
    nn = torch.nn
    m = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    x = torch.randn(128, 1024, device=dev)
    warm_up(torch, lambda: m(x))
    pool = torch.cuda.MemPool()
    g = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(g, pool=pool.id):
        y = m(x)
    keep, sums = [], []
    for i in range(5):
        g.replay()
        sums.append(float(y.sum().item()))
        with torch.cuda.use_mem_pool(pool):
            keep.append(torch.empty(rng.randint(1, 12) * MB, dtype=torch.uint8, device=dev))
        keep.append(torch.empty(rng.randint(1, 12) * MB, dtype=torch.uint8, device=dev))
        if len(keep) > 4:
            keep.pop(0)
    del g, y
    gc.collect()
    torch.cuda.empty_cache()
    keep.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    del keep[:]
    del pool
    gc.collect()
    torch.cuda.empty_cache()
    last = torch.empty(5 * MB, dtype=torch.uint8, device=dev)
    info["program_result"] = {"sums": sums}
    return last, m, x


def p_capture_fork_two(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    b = nn.Sequential(nn.Linear(1024, 3072), nn.GELU(), nn.Linear(3072, 1024)).to(dev)
    c = nn.Sequential(nn.Linear(1024, 1536), nn.GELU(), nn.Linear(1536, 1024)).to(dev)
    x = torch.randn(160, 1024, device=dev)
    s2, s3 = torch.cuda.Stream(), torch.cuda.Stream()
    warm_up(torch, lambda: a(x) + b(x) + c(x))
    g = torch.cuda.CUDAGraph()
    with torch.no_grad():
        with torch.cuda.graph(g):
            cap = torch.cuda.current_stream()
            s2.wait_stream(cap)
            s3.wait_stream(cap)
            with torch.cuda.stream(s2):
                yb = b(x)
            with torch.cuda.stream(s3):
                yc = c(x)
            ya = a(x)
            cap.wait_stream(s2)
            cap.wait_stream(s3)
            y = ya + yb + yc
    keep = []
    for i in range(5):
        g.replay()
        for st in (s2, s3):
            st.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(st):
                keep.append(torch.empty(rng.randint(1, 16) * MB, dtype=torch.uint8, device=dev) * 1)
            torch.cuda.current_stream().wait_stream(st)
        if len(keep) > 4:
            keep.pop(0)
    torch.cuda.synchronize()
    del g, y, ya, yb, yc
    torch.cuda.empty_cache()
    keep.append(torch.empty(4 * MB, dtype=torch.uint8, device=dev))
    return keep, a, b, c, x


def p_graph_retry(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).to(dev)
    x = torch.randn(512, 1024, device=dev)
    warm_up(torch, lambda: m(x))
    g = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(g):
        y = m(x)
    pool = torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(pool):
        held = [torch.empty(rng.randint(10, 30) * MB, dtype=torch.uint8, device=dev) for _ in range(3)]
    del held[:2]
    g.replay()
    del g, y
    eager, ooms = [], 0
    for i in range(8):
        try:
            eager.append(torch.empty(rng.randint(20, 70) * MB, dtype=torch.uint8, device=dev))
            if len(eager) > 3:
                eager.pop(0)
        except torch.OutOfMemoryError:
            ooms += 1
    info["program_result"] = {"ooms_caught": ooms}
    return eager, held, pool, m, x


def p_graph_reset_shared(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    b = nn.Sequential(nn.Linear(1024, 3072), nn.GELU(), nn.Linear(3072, 1024)).to(dev)
    x = torch.randn(192, 1024, device=dev)
    warm_up(torch, lambda: b(a(x)), times=2)
    g1, g2 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.no_grad():
        with torch.cuda.graph(g1):
            h = a(x)
        side = torch.empty(rng.randint(2, 8) * MB, dtype=torch.uint8, device=dev)
        with torch.cuda.graph(g2, pool=g1.pool()):
            y = b(h)
    keep = [side]
    for i in range(4):
        g1.replay(); g2.replay()
        keep.append(torch.empty(rng.randint(1, 20) * MB, dtype=torch.uint8, device=dev))
    del h
    g1.reset()
    torch.cuda.empty_cache()
    keep.append(torch.empty(6 * MB, dtype=torch.uint8, device=dev))
    for i in range(2):
        g2.replay()
    del y
    g2.reset()
    keep += [torch.empty(rng.randint(1, 30) * MB, dtype=torch.uint8, device=dev) for _ in range(3)]
    torch.cuda.empty_cache()
    keep.append(torch.empty(2 * MB, dtype=torch.uint8, device=dev))
    return keep, a, b, x


def p_mempool_use_on_oom(torch, dev, rng, info):
    try:
        pool = torch.cuda.MemPool(use_on_oom=True)
    except TypeError as e:
        info["program_result"] = {"skipped": str(e)}
        return []
    with torch.cuda.use_mem_pool(pool):
        held = [torch.empty(rng.randint(20, 50) * MB, dtype=torch.uint8, device=dev) for _ in range(4)]
    del held[:3]
    eager, ooms = [], 0
    for i in range(10):
        try:
            eager.append(torch.empty(rng.randint(20, 80) * MB, dtype=torch.uint8, device=dev))
            if len(eager) > 3:
                eager.pop(rng.randrange(len(eager)))
        except torch.OutOfMemoryError:
            ooms += 1
    info["program_result"] = {"ooms_caught": ooms}
    return eager, held, pool


def p_capture_record_fork(torch, dev, rng, info):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(1024, 2048), nn.GELU(), nn.Linear(2048, 1024)).to(dev)
    x = torch.randn(160, 1024, device=dev)
    s2 = torch.cuda.Stream()
    warm_up(torch, lambda: m(x))
    g = torch.cuda.CUDAGraph()
    with torch.no_grad():
        with torch.cuda.graph(g):
            cap = torch.cuda.current_stream()
            u = m(x)
            s2.wait_stream(cap)
            with torch.cuda.stream(s2):
                v = u * 2
            u.record_stream(s2)
            del u
            w = torch.empty(2 * MB, dtype=torch.uint8, device=dev)
            cap.wait_stream(s2)
            y = v + 1
            del w
    keep = []
    for i in range(4):
        g.replay()
        t = torch.empty(rng.randint(1, 12) * MB, dtype=torch.uint8, device=dev)
        s2.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s2):
            t.add_(1)
        t.record_stream(s2)
        del t
        keep.append(torch.empty(rng.randint(1, 8) * MB, dtype=torch.uint8, device=dev))
    torch.cuda.synchronize()
    del g, y, v
    torch.cuda.empty_cache()
    keep.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    return keep, m, x


def p_empty_cache_in_scope(torch, dev, rng, info):
    import gc
    pool = torch.cuda.MemPool()
    eager = [torch.empty(rng.randint(2, 20) * MB, dtype=torch.uint8, device=dev) for _ in range(3)]
    with torch.cuda.use_mem_pool(pool):
        a = [torch.empty(rng.randint(2, 20) * MB, dtype=torch.uint8, device=dev) for _ in range(3)]
        del a[0]
        del eager[0]
        torch.cuda.empty_cache()
        a.append(torch.empty(5 * MB, dtype=torch.uint8, device=dev))
    del a[0]
    torch.cuda.empty_cache()
    eager.append(torch.empty(4 * MB, dtype=torch.uint8, device=dev))
    del a
    del pool
    gc.collect()
    torch.cuda.empty_cache()
    eager.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    return eager


def p_compile_gpt2_lengths(torch, dev, rng, info):
    from transformers import GPT2Config, GPT2LMHeadModel
    import transformers
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(**GPT2)).to(dev).train()
    info["program_params"] = {"gpt2": GPT2, "transformers_version": transformers.__version__}
    f = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    vals = []
    for step, length in enumerate((32, 64, 32, 64, 32, 64)):
        torch.compiler.cudagraph_mark_step_begin()
        idx = torch.randint(0, GPT2["vocab_size"], (8, length), device=dev)
        out = f(input_ids=idx, labels=idx)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        vals.append(float(out.loss.item()))
        del out, idx
    info["program_result"] = {"values": vals}
    return model, f, opt


def p_amp_graph_train(torch, dev, rng, info):
    model = mlp(torch, dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, capturable=True)
    x = torch.randn(256, 512, device=dev)
    t = torch.randn(256, 512, device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(x).float(), t)
        loss.backward()
        opt.step()
        return loss

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        static_loss = step()
    keep, losses = [], []
    for i in range(8):
        x.copy_(torch.randn(256, 512, device=dev))
        g.replay()
        losses.append(float(static_loss.item()))
        keep.append(torch.empty(rng.randint(1, 30) * MB, dtype=torch.uint8, device=dev))
        if len(keep) > 3:
            keep.pop(rng.randrange(len(keep)))
    del g, static_loss
    torch.cuda.empty_cache()
    keep.append(torch.empty(5 * MB, dtype=torch.uint8, device=dev))
    info["program_result"] = {"losses": losses}
    return keep, model, opt


def p_compile_two_modules(torch, dev, rng, info):
    nn = torch.nn
    a = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512)).to(dev).eval()
    b = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 256)).to(dev).eval()
    fa = torch.compile(a, mode="reduce-overhead")
    fb = torch.compile(b, mode="reduce-overhead")
    vals = []
    with torch.no_grad():
        for step in range(5):
            torch.compiler.cudagraph_mark_step_begin()
            h = fa(torch.randn(128, 512, device=dev))
            mid = torch.nn.functional.layer_norm(h.clone(), (512,))  # eager work between the graphs
            out = fb(mid)
            vals.append(float(out.float().mean().item()))
            del h, mid, out
    info["program_result"] = {"values": vals}
    return a, b, fa, fb


def p_mempool_activations(torch, dev, rng, info):
    import gc
    model = mlp(torch, dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    pool = torch.cuda.MemPool()
    losses = []
    for step in range(6):
        x = torch.randn(rng.choice([128, 256]), 512, device=dev)
        with torch.cuda.use_mem_pool(pool):
            y = model(x)
            loss = y.square().mean()
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
        if step < 5:
            opt.zero_grad(set_to_none=True)
        del x, y, loss
    del pool
    gc.collect()
    torch.cuda.empty_cache()
    last = torch.empty(4 * MB, dtype=torch.uint8, device=dev)
    info["program_result"] = {"losses": losses}
    return last, model, opt


def p_compile_empty_cache(torch, dev, rng, info):
    model = mlp(torch, dev)
    f = torch.compile(model, mode="reduce-overhead")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    vals = []
    for step in range(5):
        torch.compiler.cudagraph_mark_step_begin()
        x = torch.randn(128, 512, device=dev)
        loss = f(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        vals.append(float(loss.item()))
        del loss, x
        torch.cuda.empty_cache()
    info["program_result"] = {"values": vals}
    return model, f, opt


def p_mempool_side_stream(torch, dev, rng, info):
    import gc
    side = torch.cuda.Stream()
    pool = torch.cuda.MemPool()
    keep = []
    with torch.cuda.use_mem_pool(pool):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            made = [torch.empty(rng.randint(1, 12) * MB, dtype=torch.uint8, device=dev) for _ in range(4)]
            for t in made:
                t.fill_(1)
        torch.cuda.current_stream().wait_stream(side)
        for t in made:
            t.record_stream(torch.cuda.current_stream())
            keep.append(t * 2)
        torch.cuda._sleep(20_000_000)
        del made, t  # frees pending on the default stream's work
        keep.append(torch.empty(3 * MB, dtype=torch.uint8, device=dev))
    eager = [torch.empty(rng.randint(1, 20) * MB, dtype=torch.uint8, device=dev) for _ in range(2)]
    torch.cuda.synchronize()
    del keep
    del pool
    gc.collect()
    torch.cuda.empty_cache()
    eager.append(torch.empty(2 * MB, dtype=torch.uint8, device=dev))
    return eager


def p_pool_handle_three(torch, dev, rng, info):
    nn = torch.nn
    mods = [nn.Sequential(nn.Linear(1024, w), nn.GELU(), nn.Linear(w, 1024)).to(dev) for w in (1024, 2048, 3072)]
    x = torch.randn(128, 1024, device=dev)
    warm_up(torch, lambda: [m(x) for m in mods])
    handle = torch.cuda.graph_pool_handle()
    gs, outs, keep = [], [], []
    with torch.no_grad():
        for m in mods:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=handle):
                outs.append(m(x))
            gs.append(g)
            keep.append(torch.empty(rng.randint(1, 10) * MB, dtype=torch.uint8, device=dev))
    for i in range(5):
        for g in gs:
            g.replay()
        keep.append(torch.empty(rng.randint(1, 16) * MB, dtype=torch.uint8, device=dev))
        if len(keep) > 5:
            keep.pop(0)
    for k in (1, 0):
        del gs[k], outs[k]
        torch.cuda.empty_cache()
        keep.append(torch.empty(rng.randint(1, 6) * MB, dtype=torch.uint8, device=dev))
    del gs, outs
    torch.cuda.empty_cache()
    keep.append(torch.empty(2 * MB, dtype=torch.uint8, device=dev))
    return keep, mods, x


def child(program, cfgname, out):
    t0 = time.time()
    import torch
    t_import = time.time() - t0
    torch.cuda.init()
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(0)
    frac = None
    fractions = {"cudagraph_train_frac": 400, "mempool_retry": 300, "graph_retry": 350, "mempool_use_on_oom": 300}
    if program in fractions:
        frac = fractions[program] * MB / props.total_memory
        torch.cuda.set_per_process_memory_fraction(frac, 0)
    torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")
    info = {
        "program": program, "config_name": cfgname,
        "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "memory_fraction": frac, "total_memory": props.total_memory,
        "device_name": torch.cuda.get_device_name(0), "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "record_memory_history": {"max_entries": 1000000, "stacks": "python"},
        "import_torch_seconds": t_import,
    }
    rng = random.Random(0)
    torch.manual_seed(0)
    t1 = time.time()
    keep = globals()["p_" + program](torch, dev, rng, info)
    torch.cuda.synchronize()
    finish(torch, os.path.join(out, f"{program}__{cfgname}"), info, t1)


# ---------------------------------------------------------------------------------------- parent

LOCK = threading.Lock()


def parent(out, tar, deadline, lanes):
    t_start = time.time()
    os.makedirs(out, exist_ok=True)
    results = []

    def launch(job):
        program, cfg = job
        if time.time() - t_start > deadline:
            row = {"program": program, "config": cfg, "rc": "skipped (deadline)"}
        else:
            env = dict(os.environ)
            env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
            if CONFS[cfg]:
                env["PYTORCH_CUDA_ALLOC_CONF"] = CONFS[cfg]
            env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
                        "TORCHINDUCTOR_COMPILE_THREADS": "2"})
            t = time.time()
            left = max(20, deadline + 60 - (t - t_start))
            try:
                r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", program, cfg, out],
                                   env=env, capture_output=True, text=True, timeout=min(300, left))
                rc, err = r.returncode, (r.stderr or "")[-2500:]
            except subprocess.TimeoutExpired as e:
                rc, err = "timeout", str(e)[-300:]
            row = {"program": program, "config": cfg, "rc": rc, "wall": round(time.time() - t, 1)}
            jpath = os.path.join(out, f"{program}__{cfg}.json")
            if rc == 0 and os.path.exists(jpath):
                with open(jpath) as f:
                    j = json.load(f)
                ms = j["memory_stats"]
                row.update({k: ms.get(k) for k in ("reserved_bytes.all.peak", "allocated_bytes.all.current",
                                                   "num_alloc_retries", "num_ooms", "num_sync_all_streams",
                                                   "num_device_free")})
                row.update({"entries": j["trace_entries"], "pickle_bytes": j["pickle_bytes"],
                            "result": j.get("program_result")})
            else:
                row["stderr"] = err
        with LOCK:
            results.append(row)
            print(json.dumps(row), flush=True)
            with open(os.path.join(out, "index.json"), "w") as f:
                json.dump(results, f, indent=1)
            write_tar(out, tar)

    with ThreadPoolExecutor(max_workers=lanes) as ex:
        list(ex.map(launch, JOBS))
    print(f"done in {time.time() - t_start:.0f}s", flush=True)
    with LOCK:
        write_tar(out, tar)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "--child":
        child(a[1], a[2], a[3])
    else:
        tar = a[a.index("--tar") + 1] if "--tar" in a else None
        deadline = float(a[a.index("--deadline") + 1]) if "--deadline" in a else 1e9
        lanes = int(a[a.index("--lanes") + 1]) if "--lanes" in a else 4
        if "--programs" in a:
            chosen = a[a.index("--programs") + 1].split(",")
            JOBS[:] = [job for job in JOBS if job[0] in chosen]
        parent(a[0], tar, deadline, lanes)
