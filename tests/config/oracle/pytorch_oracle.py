#!/usr/bin/env python3
"""Ground truth for the config parser: runs each PYTORCH_CUDA_ALLOC_CONF string through real
PyTorch (one fresh process per string: import torch, CUDA init, a tensor, the snapshot's
allocator settings) and records what happened. Needs a CUDA GPU and torch; not part of CTest.

usage: pytorch_oracle.py CASES.txt OUT.json
CASES.txt: one case per line, a JSON array: ["env string"] or ["env string", "runtime string"]
(the second one is then passed to torch._C._accelerator_setAllocatorSettings after CUDA init).
"""
import concurrent.futures
import json
import os
import subprocess
import sys

CHILD = r'''
import json, sys
out = {"stage": "import"}
import torch
out["torch"] = torch.__version__
out["stage"] = "init"
def settings():
    s = {}
    try:
        s["max_split_size"] = torch.cuda.memory_stats().get("max_split_size")
    except Exception as e:
        s["stats_error"] = str(e)
    try:
        snap = torch.cuda.memory._snapshot()
        s["allocator_settings"] = snap.get("allocator_settings")
    except Exception as e:
        s["snapshot_error"] = type(e).__name__ + ": " + str(e)
    try:
        s["fraction"] = torch.cuda.get_per_process_memory_fraction()
    except Exception as e:
        s["fraction_error"] = str(e)
    s["backend"] = torch.cuda.get_allocator_backend()
    return s
try:
    torch.cuda.init()
    x = torch.zeros(1, device="cuda")
except BaseException as e:
    out["exc_type"] = type(e).__name__
    out["exc_msg"] = str(e)
    print("ORACLE " + json.dumps(out, default=str)); sys.exit(0)
out["stage"] = "ok"
out["settings"] = settings()
# Does anything read (and reject) the config later? The pinned host allocator reads it lazily.
try:
    torch.empty(16).pin_memory()
    out["pin_memory"] = "ok"
except BaseException as e:
    out["pin_memory"] = type(e).__name__ + ": " + str(e)
if len(sys.argv) > 1:
    out["stage"] = "runtime"
    try:
        torch._C._accelerator_setAllocatorSettings(sys.argv[1])
        out["stage"] = "runtime_ok"
        out["runtime_settings"] = settings()
    except BaseException as e:
        out["exc_type"] = type(e).__name__
        out["exc_msg"] = str(e)
print("ORACLE " + json.dumps(out, default=str))
'''


def run(case):
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")}
    env["PYTORCH_CUDA_ALLOC_CONF"] = case[0]
    args = [sys.executable, "-c", CHILD] + case[1:2]
    try:
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"case": case, "timeout": True}
    rec = {"case": case, "rc": p.returncode}
    for line in p.stdout.splitlines():
        if line.startswith("ORACLE "):
            rec["result"] = json.loads(line[7:])
    err = p.stderr
    if "terminate called" in err:
        rec["terminate"] = err[err.index("terminate called"):][:600]
    rec["stderr_tail"] = err[-800:]
    return rec


def main():
    cases = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
    with concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("ORACLE_JOBS", "12"))) as pool:
        results = list(pool.map(run, cases))
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1, ensure_ascii=False)
    print(len(results), "cases;", sum(1 for r in results if r.get("result", {}).get("stage") in ("ok", "runtime_ok")), "accepted")


if __name__ == "__main__":
    main()
