"""Record real PyTorch CUDA-caching-allocator snapshots that end in an OOM, with PyTorch's ground truth.

Usage: python3 oom_tracegen.py RESULTDIR [--tar FILE] [--deadline SECONDS]
           parent: runs every program x config, each in a fresh child process; after each child it
           (re)writes FILE (a .tar.gz of RESULTDIR), so a run stopped early still brings back what it made
       python3 oom_tracegen.py --child PROGRAM CONFIGNAME RESULTDIR [--cut N] [--bmode dispatch|steps]
           child: one program under one config (PYTORCH_CUDA_ALLOC_CONF comes from the environment)

Each child sets nothing before `import torch` but what the parent put in its environment, starts
`torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")` before the first
allocation, runs the program, and at its end -- right after the op that raised
`torch.OutOfMemoryError`, or right after the last op of the program -- writes
RESULTDIR/P__C.pickle (torch.cuda.memory._snapshot(), file names in stack frames shortened to their
base name, pickle protocol 4) and RESULTDIR/P__C.json (memory_stats, memory_summary, the config,
the memory fraction, total memory, mem_get_info, the OOM message), then leaves with os._exit(0),
so nothing is freed after the program's last op.

The program of every config is the program of the default config: the default config is run first
and stops at its OOM; every other config then runs the same ops up to and including that one (--cut),
so "does config C OOM on this program" is answered by C's own real run.

Programs:
  kv_frac_oom     growing per-request buffers with long-lived pieces interleaved (a KV cache),
                  under set_per_process_memory_fraction(0.03)
  kv_fulldev_oom  the same ops, no memory fraction, on a device made full first: all but 3 GiB of
                  the free memory is taken with cudaMalloc through ctypes (memory PyTorch does not own)
  gpt2_frac_oom   a 4-layer GPT-2 (transformers, random init) trained with AdamW, batch growing,
                  under set_per_process_memory_fraction(0.025); cut at the aten op (TorchDispatchMode)
"""
import json, os, random, subprocess, sys, tarfile, time

MB = 1 << 20
GB = 1 << 30

# The configs allocscope's `recommend` tries (allocator/compare/Recommender.cpp, Recommender::grid):
# expandable x max_split_size_mb x roundup_power2_divisions x garbage_collection_threshold (the last
# only under a memory fraction). backend:cudaMallocAsync is left out: PyTorch 2.11 records no history
# under it.
def grid(with_fraction):
    out = []
    for expandable in (False, True):
        for split in ("", "128", "512"):
            for rup in ("", "4"):
                for gc in ("", "0.6"):
                    if not with_fraction and gc:
                        continue
                    parts, names = [], []
                    if expandable:
                        parts.append("expandable_segments:True"); names.append("expandable")
                    if split:
                        parts.append("max_split_size_mb:" + split); names.append("msplit" + split)
                    if rup:
                        parts.append("roundup_power2_divisions:" + rup); names.append("rup" + rup)
                    if gc:
                        parts.append("garbage_collection_threshold:" + gc); names.append("gc06")
                    out.append(("_".join(names) or "default", ",".join(parts)))
    # simplest first (the order recordings are made in, so an early stop keeps the informative ones)
    first = ["default", "expandable", "msplit128", "msplit512", "rup4", "gc06"]
    return sorted(out, key=lambda nc: (nc[0].count("_") + (nc[0] != "default"),
                                       first.index(nc[0]) if nc[0] in first else 0, out.index(nc)))


PROGRAMS = {
    "kv_frac_oom": {"fraction": 0.03, "leave_free": None},
    "kv_fulldev_oom": {"fraction": None, "leave_free": 3 * GB},
    "gpt2_frac_oom": {"fraction": 0.025, "leave_free": None},
}

GPT2_CONFIGS = ["default", "expandable", "msplit128", "msplit512", "rup4", "gc06",
                "expandable_rup4", "msplit128_gc06"]


def configs_of(program):
    g = grid(PROGRAMS[program]["fraction"] is not None)
    if program == "gpt2_frac_oom":
        g = [nc for nc in g if nc[0] in GPT2_CONFIGS]
    return g


def kv_ops(seed=0, stop_live=8 * GB, max_ops=40000):
    """The KV-cache pattern as a flat list of ("alloc", slot, bytes) / ("free", slot, bytes).
    Pure Python, seeded: the same list in every process. It goes on until 8 GiB are live, so the
    default config is sure to run out of memory somewhere on the way."""
    rng = random.Random(seed)
    ops = []
    state = {"next": 0, "live": 0}
    live, keep = {}, []

    def alloc(n):
        s = state["next"]; state["next"] += 1
        ops.append(("alloc", s, n)); state["live"] += n
        return s

    def free(s, n):
        ops.append(("free", s, n)); state["live"] -= n

    step = 0
    while state["live"] < stop_live and len(ops) < max_ops:
        rid = step % 6
        old = live.get(rid)
        grow = (old[1] if old else 24 * MB) + rng.randint(1, 6) * MB
        live[rid] = (alloc(grow), grow)  # the grown buffer is allocated before the old one is freed
        if old:
            free(*old)
        if step % 5 == 0:  # a long-lived piece between the buffers
            n = rng.randint(3, 15) * MB
            keep.append((alloc(n), n))
        if step % 40 == 39:  # a request ends
            r = rng.randrange(6)
            if r in live:
                free(*live.pop(r))
        step += 1
    return ops


GPT2 = dict(vocab_size=8192, n_positions=128, n_embd=512, n_layer=4, n_head=8,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
GPT2_SEQ = 128
GPT2_BATCHES = [16, 16, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512]


# ----------------------------------------------------------------------------------------- child

def is_oom(torch, e):
    return isinstance(e, torch.OutOfMemoryError) or "CUDA out of memory" in str(e)


def shorten_frames(obj, seen):
    """File names in stack frames -> base name (interned, so the pickle stores each name once)."""
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, dict):
            fn = o.get("filename")
            if isinstance(fn, str):
                o["filename"] = sys.intern(os.path.basename(fn))
                if isinstance(o.get("name"), str):
                    o["name"] = sys.intern(o["name"])
            stack.extend(v for v in o.values() if isinstance(v, (dict, list)))
        elif isinstance(o, list):
            stack.extend(v for v in o if isinstance(v, (dict, list)))


class Recorder:
    def __init__(self, torch, base, info):
        self.torch, self.base, self.info = torch, base, info
        self.t0 = time.time()

    def finish(self, oom, **extra):
        """Write the snapshot and the ground truth now, then leave the process (never returns)."""
        torch = self.torch
        import pickle
        t1 = time.time()
        snap = torch.cuda.memory._snapshot()
        shorten_frames(snap, set())
        with open(self.base + ".pickle", "wb") as f:
            pickle.dump(snap, f, protocol=4)
        actions = {}
        for entries in snap.get("device_traces", []):
            for e in entries:
                actions[e["action"]] = actions.get(e["action"], 0) + 1
        info = dict(self.info)
        info.update(extra)
        info.update({
            "oom": oom,
            "seconds": t1 - self.t0,
            "mem_get_info_at_end": list(torch.cuda.mem_get_info(0)),
            "trace_actions": actions,
            "trace_entries": sum(actions.values()),
            "pickle_bytes": os.path.getsize(self.base + ".pickle"),
            "memory_stats": dict(torch.cuda.memory_stats()),
            "summary": torch.cuda.memory_summary(),
        })
        with open(self.base + ".json", "w") as f:
            json.dump(info, f, indent=1)
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(0)


def find_cudart():
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "libcudart.so" in os.path.basename(parts[-1]):
                return parts[-1]
    import glob
    for d in sys.path:
        for p in sorted(glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcudart.so*"))):
            return p
    import ctypes.util
    return ctypes.util.find_library("cudart")


def hold_device_memory(torch, leave_free):
    """Take all but `leave_free` bytes of the free device memory with cudaMalloc, outside PyTorch."""
    import ctypes
    gran = 2 * MB
    held, chunks, method = 0, [], None
    path = find_cudart()
    lib = None
    if path:
        try:
            lib = ctypes.CDLL(path)
            lib.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
            lib.cudaMalloc.restype = ctypes.c_int
            method = "cudaMalloc via ctypes on " + os.path.basename(path)
        except OSError:
            lib = None
    keep_alive = []

    def malloc(n):
        if lib is not None:
            p = ctypes.c_void_p()
            rc = lib.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
            if rc != 0:
                lib.cudaGetLastError()
                return False
            keep_alive.append(p)
            return True
        import cupy
        try:
            keep_alive.append(cupy.cuda.runtime.malloc(n))
            return True
        except Exception:
            return False

    if lib is None:
        method = "cupy.cuda.runtime.malloc"
    for _ in range(64):
        free = torch.cuda.mem_get_info(0)[0]
        want = (free - leave_free) // gran * gran
        if want < gran:
            break
        n = want
        while n >= gran and not malloc(n):  # one piece if it can, else halves
            n = max(gran, (n // 2) // gran * gran) if n > gran else 0
        if n < gran:
            break
        held += n
        chunks.append(n)
    HOLD.extend(keep_alive)
    return held, chunks, method, path


HOLD = []


def run_kv(torch, rec, cut):
    dev = torch.device("cuda")
    ops = kv_ops()
    n = len(ops) if cut is None else cut + 1
    slots = {}
    for i in range(n):
        a, s, nbytes = ops[i]
        if a == "alloc":
            try:
                slots[s] = torch.empty(nbytes, dtype=torch.uint8, device=dev)
            except Exception as e:
                if not is_oom(torch, e):
                    raise
                rec.finish(str(e), oom_op_index=i, ops_run=i + 1, ops_total=len(ops),
                           last_request_bytes=nbytes, live_tensors=len(slots))
        else:
            del slots[s]
    rec.finish(None, oom_op_index=None, ops_run=n, ops_total=len(ops),
               last_request_bytes=ops[n - 1][2], live_tensors=len(slots))


def run_gpt2(torch, rec, cut, bmode):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import GPT2Config, GPT2LMHeadModel
    from torch.utils._python_dispatch import TorchDispatchMode
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(**GPT2))  # on the CPU: no device memory yet
    model.train()
    where = {"step": None, "batch": None}
    import transformers
    extra_common = {"bmode": bmode, "transformers_version": transformers.__version__, "attn_implementation": getattr(getattr(model, "config", None), "_attn_implementation", None),
                    "params": sum(p.numel() for p in model.parameters())}

    class OpCounter(TorchDispatchMode):
        """Counts aten ops (forward, backward in the autograd thread, optimizer); finishes the
        recording at the op that runs out of memory, or right after op `cut`."""
        n = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            i = OpCounter.n
            OpCounter.n += 1
            try:
                out = func(*args, **(kwargs or {}))
            except Exception as e:
                if is_oom(torch, e):
                    rec.finish(str(e), oom_aten_op_index=i, aten_op=str(func), step=where["step"],
                               batch=where["batch"], **extra_common)
                raise
            if cut is not None and bmode == "dispatch" and i >= cut:
                rec.finish(None, oom_aten_op_index=None, stopped_after_aten_op=i, aten_op=str(func),
                           step=where["step"], batch=where["batch"], **extra_common)
            return out

    mode = OpCounter() if bmode == "dispatch" else None
    if mode is not None:
        mode.__enter__()
    try:
        model.to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        for step, B in enumerate(GPT2_BATCHES):
            where["step"], where["batch"] = step, B
            idx = torch.randint(0, GPT2["vocab_size"], (B, GPT2_SEQ), device=dev)
            out = model(input_ids=idx, labels=idx)
            out.loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del out, idx
            if cut is not None and bmode == "steps" and step >= cut:
                break
    except Exception as e:
        if not is_oom(torch, e):
            raise
        # only reached when the dispatch mode did not see the op (or bmode == "steps")
        rec.finish(str(e), oom_aten_op_index=None, oom_step=where["step"], step=where["step"],
                   batch=where["batch"], aten_ops_seen=OpCounter.n, **extra_common)
    rec.finish(None, oom_aten_op_index=None, step=where["step"], batch=where["batch"],
               aten_ops_seen=OpCounter.n, **extra_common)


def child(program, cfgname, out, cut, bmode):
    t_import = time.time()
    import torch
    t_import = time.time() - t_import
    spec = PROGRAMS[program]
    torch.cuda.init()
    free0, total0 = torch.cuda.mem_get_info(0)  # after CUDA init (the context), before any allocation
    props = torch.cuda.get_device_properties(0)
    frac = spec["fraction"]
    if frac is not None:
        torch.cuda.set_per_process_memory_fraction(frac, 0)
    torch.cuda.memory._record_memory_history(max_entries=1000000, stacks="python")
    info = {
        "program": program,
        "config_name": cfgname,
        "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "memory_fraction": frac,
        "total_memory": props.total_memory,
        "mem_get_info_at_start": [free0, total0],
        "held_by_other_bytes": None,
        "device_name": torch.cuda.get_device_name(0),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "record_memory_history": {"max_entries": 1000000, "stacks": "python"},
        "cut": cut,
        "import_torch_seconds": t_import,
    }
    if spec["leave_free"] is not None:
        held, chunks, method, path = hold_device_memory(torch, spec["leave_free"])
        info.update({"held_by_other_bytes": held, "held_chunks": chunks, "hold_method": method,
                     "leave_free_target": spec["leave_free"],
                     "mem_get_info_after_hold": list(torch.cuda.mem_get_info(0))})
    if program.startswith("kv_"):
        info["program_params"] = {"generator": "kv_ops", "seed": 0, "stop_live": 8 * GB}
    else:
        info["program_params"] = {"gpt2": GPT2, "seq": GPT2_SEQ, "batches": GPT2_BATCHES,
                                  "optimizer": "AdamW(lr=1e-4)"}
    rec = Recorder(torch, os.path.join(out, f"{program}__{cfgname}"), info)
    if program.startswith("kv_"):
        run_kv(torch, rec, cut)
    else:
        run_gpt2(torch, rec, cut, bmode)


# ---------------------------------------------------------------------------------------- parent

def write_tar(out, tar):
    if not tar:
        return
    tmp = tar + ".tmp"
    with tarfile.open(tmp, "w:gz") as t:
        t.add(out, arcname=os.path.basename(out.rstrip("/")))
    os.replace(tmp, tar)


def parent(out, tar, deadline):
    t_start = time.time()
    os.makedirs(out, exist_ok=True)
    log = open(os.path.join(out, "run.log"), "a")

    def say(msg):
        print(msg, flush=True)
        log.write(msg + "\n"); log.flush()

    results = {}

    def launch(program, cfg, conf, cut, bmode="dispatch", timeout=120):
        env = dict(os.environ)
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        env["HF_HUB_OFFLINE"] = "1"
        env["TRANSFORMERS_OFFLINE"] = "1"
        env["PYTHONUNBUFFERED"] = "1"
        args = [sys.executable, os.path.abspath(__file__), "--child", program, cfg, out, "--bmode", bmode]
        if cut is not None:
            args += ["--cut", str(cut)]
        t = time.time()
        try:
            r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
            rc, err = r.returncode, (r.stderr or "")[-1500:]
        except subprocess.TimeoutExpired as e:
            rc, err = "timeout", str(e)[-500:]
        jpath = os.path.join(out, f"{program}__{cfg}.json")
        j = None
        if rc == 0 and os.path.exists(jpath):
            with open(jpath) as f:
                j = json.load(f)
        row = {"program": program, "config": cfg, "conf": conf, "cut": cut, "bmode": bmode, "rc": rc,
               "wall": round(time.time() - t, 1)}
        if j:
            ms = j["memory_stats"]
            row.update({"oom": j["oom"] is not None, "oom_op_index": j.get("oom_op_index"),
                        "oom_aten_op_index": j.get("oom_aten_op_index"),
                        "peak_reserved": ms.get("reserved_bytes.all.peak"),
                        "peak_allocated": ms.get("allocated_bytes.all.peak"),
                        "num_ooms": ms.get("num_ooms"), "num_alloc_retries": ms.get("num_alloc_retries"),
                        "num_device_alloc": ms.get("num_device_alloc"),
                        "allocs_in_trace": j["trace_actions"].get("alloc", 0),
                        "pickle_bytes": j["pickle_bytes"], "child_seconds": round(j["seconds"], 2)})
        else:
            row["stderr"] = err
        results[(program, cfg)] = row
        say(json.dumps(row))
        with open(os.path.join(out, "index.json"), "w") as f:
            json.dump(list(results.values()), f, indent=1)
        write_tar(out, tar)
        return j

    cuts = {}
    bmode = "dispatch"
    # 1. the default config of each program, which fixes the program's last op
    for program in ("kv_frac_oom", "kv_fulldev_oom", "gpt2_frac_oom"):
        j = launch(program, "default", "", None, bmode)
        if j is None and program == "gpt2_frac_oom":
            say("gpt2 in dispatch mode failed; again, cut by training steps")
            bmode = "steps"
            j = launch(program, "default", "", None, bmode)
        if j is None:
            cuts[program] = "failed"
        elif program.startswith("kv_"):
            cuts[program] = j.get("oom_op_index")
        elif bmode == "dispatch":
            cuts[program] = j.get("oom_aten_op_index")
            if cuts[program] is None and j["oom"] is not None:  # the mode missed the op: fall back
                say("gpt2's OOM came from an op the dispatch mode did not see; cut by training steps")
                bmode = "steps"
                j = launch(program, "default", "", None, bmode)
                cuts[program] = j.get("oom_step") if j else "failed"
        else:
            cuts[program] = j.get("oom_step")
        say(f"cut {program}: {cuts[program]}")
    # 2. every other config, round robin over the programs, simplest configs first
    queues = {p: [nc for nc in configs_of(p) if nc[0] != "default"] for p in PROGRAMS}
    while any(queues.values()):
        for program in PROGRAMS:
            if not queues[program] or cuts[program] == "failed":
                queues[program] = []
                continue
            if time.time() - t_start > deadline:
                say(f"deadline: left out {[(p, c) for p in queues for c, _ in queues[p]]}")
                queues = {p: [] for p in PROGRAMS}
                break
            cfg, conf = queues[program].pop(0)
            launch(program, cfg, conf, cuts[program], bmode if program.startswith("gpt2") else "dispatch",
                   timeout=100)
    say(f"done in {time.time() - t_start:.0f}s")
    log.close()
    write_tar(out, tar)


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "--child":
        cut = int(a[a.index("--cut") + 1]) if "--cut" in a else None
        bmode = a[a.index("--bmode") + 1] if "--bmode" in a else "dispatch"
        child(a[1], a[2], a[3], cut, bmode)
    else:
        tar = a[a.index("--tar") + 1] if "--tar" in a else None
        deadline = float(a[a.index("--deadline") + 1]) if "--deadline" in a else 1e9
        parent(a[0], tar, deadline)
