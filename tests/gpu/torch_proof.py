"""Proof that real PyTorch programs run on AllocScope's allocator (issue 38): Hugging Face GPT-2
training and Llama-style generation, on c10 and on liballocscope_torch.so, compared.

Usage: python3 torch_proof.py OUTDIR --package DIR --library SO [--cli CLI] [--work DIR] [--steps N] [--gen-steps N]
           parent: every side x config in a fresh child process; writes OUTDIR/torch_proof.json and
           OUTDIR/torch_proof.txt (re-written after every child, so a stopped run keeps what it made);
           the children's results and sessions go to WORK (default OUTDIR/work)
       python3 torch_proof.py --child SIDE CONFIG RESULT.json [--session FILE] [--package DIR]
                              [--library SO] [--steps N] [--gen-steps N]
           child: one program run (GPT-2 training, then Llama generation) on one side:
           c10 (plain), c10_history (c10 with _record_memory_history(stacks="python")) or
           allocscope (allocscope_torch.enable(session=FILE, config=CONFIG)).

Each child sets torch.use_deterministic_algorithms(True, warn_only=True) (the parent sets
CUBLAS_WORKSPACE_CONFIG=:4096:8) so that losses can be compared bit for bit across processes; the
c10 sides get the config as PYTORCH_CUDA_ALLOC_CONF. Step times: torch.cuda.synchronize() before
and after each training step / each generate() call, the first ones left out as warm-up.
memory_stats() is taken after the training (model and optimizer alive) and at the end.
"""
import argparse, gc, json, os, statistics, subprocess, sys, time

CONFIGS = [("default", ""), ("expandable", "expandable_segments:True")]
# Two repeats of c10 and AllocScope (the statistics must be equal in both), one of c10 + history.
SIDES = ["c10", "allocscope", "c10_history", "c10", "allocscope"]
GPT2 = dict(vocab_size=8192, n_positions=128, n_embd=256, n_layer=4, n_head=4,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
GPT2_BATCH = (16, 128)
LLAMA = dict(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
PROMPTS = [(2, 16), (4, 24), (1, 40), (3, 8)]  # (batch, prompt length), cycled
NEW_TOKENS = 16
WARMUP = 10


def model_config(cls, params):
    # eager attention: no fused-attention kernel whose backward uses atomics (bitwise losses)
    try:
        return cls(**params, attn_implementation="eager")
    except TypeError:
        config = cls(**params)
        config._attn_implementation = "eager"
        return config


def timed(torch, fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    value = fn()
    torch.cuda.synchronize()
    return value, time.perf_counter() - t0


def gpt2_training(torch, dev, steps, times):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    model = GPT2LMHeadModel(model_config(GPT2Config, GPT2)).to(dev)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    batches = torch.Generator().manual_seed(1)
    losses = []

    def step(ids):
        out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return out.loss.item()

    for _ in range(steps):
        ids = torch.randint(0, GPT2["vocab_size"], GPT2_BATCH, generator=batches).to(dev)
        loss, seconds = timed(torch, lambda: step(ids))
        losses.append(loss)
        times.append(seconds)
        del ids
    return losses, (model, opt)


def llama_generation(torch, dev, calls, times):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    model = LlamaForCausalLM(model_config(LlamaConfig, LLAMA)).to(dev).eval()
    prompts = torch.Generator().manual_seed(2)
    tokens = []
    with torch.no_grad():
        for i in range(calls):
            bsz, plen = PROMPTS[i % len(PROMPTS)]
            ids = torch.randint(3, LLAMA["vocab_size"], (bsz, plen), generator=prompts).to(dev)
            out, seconds = timed(torch, lambda: model.generate(
                ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS, do_sample=False,
                pad_token_id=0, eos_token_id=None))
            tokens.append(out.tolist())
            times.append(seconds)
            del ids, out
    return tokens, model


def child(args):
    import torch
    result = {"side": args.side, "config": args.config, "pid": os.getpid()}
    if args.side == "allocscope":
        sys.path.insert(0, args.package)
        import allocscope_torch
        allocscope_torch.enable(session=args.session, config=args.config, library=args.library)
    elif args.side == "c10_history":
        torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")
    memory_stats = torch.cuda.memory_stats  # routed to the library on the AllocScope side
    torch.use_deterministic_algorithms(True, warn_only=True)
    dev = torch.device("cuda", 0)
    import transformers
    props = torch.cuda.get_device_properties(0)
    result.update(torch=torch.__version__, cuda=torch.version.cuda, transformers=transformers.__version__,
                  gpu=props.name, total_memory=props.total_memory)
    train_times, gen_times = [], []
    result["losses"], keep = gpt2_training(torch, dev, args.steps, train_times)
    result["stats_after_training"] = dict(memory_stats())
    del keep
    gc.collect()
    result["tokens"], keep = llama_generation(torch, dev, args.gen_steps, gen_times)
    result["stats_final"] = dict(memory_stats())
    result["train_step_s"], result["generate_call_s"] = train_times, gen_times
    if args.side == "allocscope":
        result["summary_text"] = allocscope_torch.memory_summary()
        result["session"] = allocscope_torch.finish()
    with open(args.result, "w") as handle:
        json.dump(result, handle)
    sys.stdout.flush()
    os._exit(0)  # nothing freed after the measured point (c10 and AllocScope alike)


def median_ms(values, warmup):
    measured = values[warmup:]
    return round(1000 * statistics.median(measured), 3) if measured else None


def differences(a, b):
    keys = sorted(set(a) | set(b))
    return [[k, a.get(k), b.get(k)] for k in keys if a.get(k) != b.get(k)]


def max_abs_difference(a, b):
    if len(a) != len(b):
        return f"lengths {len(a)} and {len(b)}"
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0)


def session_checks(cli, session, stats):
    """The session's last stats (`allocscope-cli info --json`: the run summary's final_stats) and
    its event counts (`export --events-csv`) against the library's memory_stats()."""
    out = {}
    info = subprocess.run([cli, "info", session, "--json"], capture_output=True, text=True)
    if info.returncode != 0:
        return {"error": f"info exit {info.returncode}: {info.stderr.strip()}"}
    run = json.loads(info.stdout)["runs"][-1]
    out["events_stored"] = run.get("events")
    final = run.get("summary", {}).get("final_stats")
    out["final_stats_differences"] = differences(stats, final) if final else "no summary in the session"
    csv = session + ".events.csv"
    export = subprocess.run([cli, "export", "--db", session, "--run", str(run["number"]), "--events-csv", csv],
                            capture_output=True, text=True)
    if export.returncode != 0:
        out["export_error"] = export.stderr.strip()
        return out
    counts = {}
    with open(csv) as handle:
        next(handle)
        for line in handle:
            action = line.split(",", 3)[2]
            counts[action] = counts.get(action, 0) + 1
    os.remove(csv)
    out["event_counts"] = counts
    expect = {"alloc": stats.get("allocation.all.allocated"), "free_requested": stats.get("allocation.all.freed"),
              "segment_alloc+segment_map": stats.get("num_device_alloc"),
              "segment_free+segment_unmap": stats.get("num_device_free")}
    got = {"alloc": counts.get("alloc", 0), "free_requested": counts.get("free_requested", 0),
           "segment_alloc+segment_map": counts.get("segment_alloc", 0) + counts.get("segment_map", 0),
           "segment_free+segment_unmap": counts.get("segment_free", 0) + counts.get("segment_unmap", 0)}
    out["event_count_mismatches"] = {k: [expect[k], got[k]] for k in expect if expect[k] != got[k]}
    return out


def report(results, cli):
    """Every check of the brief, per config, as (json, text lines)."""
    summary, lines = {}, []
    for name, _ in CONFIGS:
        runs = [r for r in results if r["config_name"] == name]
        by = {side: [r for r in runs if r["side"] == side and "losses" in r] for side in set(SIDES)}
        failed = [f"{r['side']}#{r['repeat']}: {r.get('error')}" for r in runs if "losses" not in r]
        s = {"failed": failed}
        lines.append(f"== config {name}" + (f"  FAILED CHILDREN: {failed}" if failed else ""))
        if by["c10"] and by["allocscope"]:
            ref = by["c10"][0]
            for side in ("allocscope", "c10_history", "c10"):
                for r in by[side]:
                    if r is ref:
                        continue
                    tag = f"{side}#{r['repeat']}"
                    same_l = r["losses"] == ref["losses"]
                    same_t = r["tokens"] == ref["tokens"]
                    s[tag + " losses_equal"] = same_l
                    s[tag + " tokens_equal"] = same_t
                    if not same_l:
                        s[tag + " losses_max_abs_diff"] = max_abs_difference(r["losses"], ref["losses"])
                    lines.append(f"{tag} vs c10#1: losses {'EQUAL' if same_l else 'DIFFER max ' + str(s.get(tag + ' losses_max_abs_diff'))}"
                                 f" ({len(r['losses'])} steps, last {r['losses'][-1]!r}), tokens {'EQUAL' if same_t else 'DIFFER'}")
            for k, (c, a) in enumerate(zip(by["c10"], by["allocscope"])):
                for point in ("stats_after_training", "stats_final"):
                    d = differences(c[point], a[point])
                    s[f"repeat{k + 1} {point} differences"] = d
                    lines.append(f"repeat {k + 1} {point}: {len(c[point]) - len(d)}/{len(c[point])} keys equal"
                                 + (f"; first differences {d[:5]}" if d else ""))
            if len(by["c10"]) == 2:
                d = differences(by["c10"][0]["stats_final"], by["c10"][1]["stats_final"])
                lines.append(f"c10#1 vs c10#2 stats_final: {len(d)} keys differ")
            for a in by["allocscope"]:
                if cli and a.get("session"):
                    chk = session_checks(cli, a["session"], a["stats_final"])
                    s[f"allocscope#{a['repeat']} session"] = chk
                    lines.append(f"allocscope#{a['repeat']} session: {json.dumps(chk)[:400]}")
        med = {}
        for side in ("c10", "c10_history", "allocscope"):
            pooled_t = [t for r in by[side] for t in r["train_step_s"][WARMUP:]]
            pooled_g = [t for r in by[side] for t in r["generate_call_s"][5:]]
            if pooled_t:
                med[side] = (round(1000 * statistics.median(pooled_t), 3), round(1000 * statistics.median(pooled_g), 3))
                per = [(median_ms(r["train_step_s"], WARMUP), median_ms(r["generate_call_s"], 5)) for r in by[side]]
                lines.append(f"{side}: train step median {med[side][0]} ms over {len(pooled_t)} steps, generate()"
                             f" median {med[side][1]} ms over {len(pooled_g)} calls (per repeat {per})")
        if "allocscope" in med:
            for base in ("c10", "c10_history"):
                if base in med:
                    ratio = [round(med["allocscope"][i] / med[base][i], 3) for i in (0, 1)]
                    s[f"time ratio allocscope/{base} (train, generate)"] = ratio
                    lines.append(f"allocscope/{base}: train {ratio[0]}, generate {ratio[1]}")
        s["medians_ms (train, generate)"] = med
        summary[name] = s
    return summary, lines


def parent(args):
    work = args.work or os.path.join(args.outdir, "work")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, CUBLAS_WORKSPACE_CONFIG=":4096:8", TOKENIZERS_PARALLELISM="false")
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    results = []
    for name, conf in CONFIGS:
        for i, side in enumerate(SIDES):
            repeat = SIDES[:i + 1].count(side)
            tag = f"{name}.{side}.{repeat}"
            out = os.path.join(work, tag + ".json")
            cmd = [sys.executable, os.path.abspath(__file__), "--child", side, conf, out, "--steps", str(args.steps),
                   "--gen-steps", str(args.gen_steps), "--package", args.package, "--library", args.library or ""]
            child_env = dict(env)
            if side == "allocscope":
                cmd += ["--session", os.path.join(work, tag + ".allocscope")]
            else:
                child_env["PYTORCH_CUDA_ALLOC_CONF"] = conf
            t0 = time.time()
            proc = subprocess.run(cmd, env=child_env, capture_output=True, text=True, timeout=args.child_timeout)
            r = {"error": f"exit {proc.returncode}: {proc.stderr[-1500:]}"}
            if proc.returncode == 0 and os.path.exists(out):
                with open(out) as handle:
                    r = json.load(handle)
                os.remove(out)
            r.update(config_name=name, side=side, repeat=repeat, wall_s=round(time.time() - t0, 1),
                     stderr_tail=proc.stderr[-600:])
            results.append(r)
            print(f"{tag}: {round(time.time() - t0, 1)} s {'ok' if 'losses' in r else r['error'][:300]}", flush=True)
            summary, lines = report(results, args.cli)
            first = next((x for x in results if "gpu" in x), {})
            head = [f"{k}: {first.get(k)}" for k in ("gpu", "total_memory", "torch", "cuda", "transformers")]
            with open(os.path.join(args.outdir, "torch_proof.txt"), "w") as handle:
                handle.write("\n".join(head + lines) + "\n")
            slim = [{k: v for k, v in x.items() if k not in ("tokens", "summary_text")} for x in results]
            with open(os.path.join(args.outdir, "torch_proof.json"), "w") as handle:
                json.dump({"machine": head, "summary": summary, "runs": slim}, handle)
    print(open(os.path.join(args.outdir, "torch_proof.txt")).read())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--child", nargs=3, metavar=("SIDE", "CONFIG", "RESULT"))
    p.add_argument("outdir", nargs="?")
    p.add_argument("--package", default=os.path.join(os.path.dirname(__file__), "..", "..", "app", "torch", "python"))
    p.add_argument("--library", default=None)
    p.add_argument("--cli", default=None)
    p.add_argument("--session", default=None)
    p.add_argument("--work", default=None)
    p.add_argument("--steps", type=int, default=70)
    p.add_argument("--gen-steps", type=int, default=55)
    p.add_argument("--child-timeout", type=int, default=120)
    args = p.parse_args()
    args.library = args.library or None
    if args.child:
        args.side, args.config, args.result = args.child
        return child(args)
    if not args.outdir:
        p.error("OUTDIR is required (or --child)")
    parent(args)


if __name__ == "__main__":
    main()
