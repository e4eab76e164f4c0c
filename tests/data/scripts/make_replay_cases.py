#!/usr/bin/env python3
"""Records small PyTorch runs on a real GPU for the replay suite (tests/replay): each case writes
CASE.pickle (the memory snapshot with its trace) and CASE.json (memory_stats, summary, config,
memory fraction, total memory), the same layout as the shared traces.

Cases (one subprocess each, so every run starts with a fresh allocator):
  streams_record_stream  two streams, record_stream: frees that complete late, one never
  gc_fraction            garbage_collection_threshold under a memory fraction
  oom_ending             a run that ends in an out-of-memory error under a memory fraction
  repeated_empty_cache   explicit empty_cache() before an alloc, before a free, and at the end
  roundup_list           roundup_power2_divisions in its list form

Usage: make_replay_cases.py OUTDIR [CASE ...]   (needs torch with CUDA)
"""
import json
import os
import pickle
import subprocess
import sys

CASES = {
    "streams_record_stream": ("", None),
    "gc_fraction": ("garbage_collection_threshold:0.5", 0.001),
    "oom_ending": ("", 0.001),
    "repeated_empty_cache": ("", None),
    "roundup_list": ("roundup_power2_divisions:[256:1,512:2,1024:4,>:8]", None),
}

MiB = 1024 * 1024


def program(name, torch):
    dev = torch.device("cuda")
    if name == "streams_record_stream":
        side = torch.cuda.Stream()
        a = torch.empty(5 * MiB, dtype=torch.uint8, device=dev)
        with torch.cuda.stream(side):
            torch.cuda._sleep(2_000_000_000)       # keep the side stream busy (~1 s)
            a.add_(1)
        a.record_stream(side)
        del a                                       # pending: side stream still uses it
        b = torch.empty(5 * MiB, dtype=torch.uint8, device=dev)
        torch.cuda.synchronize()
        c = torch.empty(5 * MiB, dtype=torch.uint8, device=dev)   # completes a's free first
        d = torch.empty(2 * MiB, dtype=torch.uint8, device=dev)
        with torch.cuda.stream(side):
            torch.cuda._sleep(50_000_000)
            b.add_(1)
        b.record_stream(side)
        del b                                       # never completes before the snapshot
        del d
        return [c]
    if name == "gc_fraction":
        x1 = torch.empty(30 * MiB, dtype=torch.uint8, device=dev)
        x2 = torch.empty(30 * MiB, dtype=torch.uint8, device=dev)
        del x1
        z = torch.empty(32 * MiB, dtype=torch.uint8, device=dev)
        del x2, z
        w = torch.empty(40 * MiB, dtype=torch.uint8, device=dev)
        return [w]
    if name == "oom_ending":
        a = torch.empty(50 * MiB, dtype=torch.uint8, device=dev)
        try:
            b = torch.empty(200 * MiB, dtype=torch.uint8, device=dev)
        except torch.OutOfMemoryError:
            pass
        return [a]
    if name == "repeated_empty_cache":
        a = torch.empty(30 * MiB, dtype=torch.uint8, device=dev)
        del a
        torch.cuda.empty_cache()
        b = torch.empty(30 * MiB, dtype=torch.uint8, device=dev)
        c = torch.empty(4096, dtype=torch.uint8, device=dev)
        del b
        torch.cuda.empty_cache()
        del c
        torch.cuda.empty_cache()
        return []
    if name == "roundup_list":
        keep = [torch.empty(n, dtype=torch.uint8, device=dev) for n in (600 * MiB + 1, 1100 * MiB + 1, 300 * MiB + 1)]
        del keep[1]
        keep.append(torch.empty(40 * MiB + 1, dtype=torch.uint8, device=dev))
        return keep
    raise SystemExit(f"unknown case {name}")


def run_case(name, outdir):
    import torch
    conf, fraction = CASES[name]
    torch.cuda.init()
    if fraction is not None:
        torch.cuda.set_per_process_memory_fraction(fraction)
    torch.cuda.memory._record_memory_history(max_entries=1_000_000)
    keep = program(name, torch)
    snap = torch.cuda.memory._snapshot()
    stats = dict(torch.cuda.memory_stats())
    summary = torch.cuda.memory_summary()
    torch.cuda.memory._record_memory_history(enabled=None)
    with open(os.path.join(outdir, name + ".pickle"), "wb") as f:
        pickle.dump(snap, f, protocol=4)
    truth = {"workload": name, "PYTORCH_CUDA_ALLOC_CONF": conf, "memory_fraction": fraction,
             "total_memory": torch.cuda.get_device_properties(0).total_memory, "torch": torch.__version__,
             "device": torch.cuda.get_device_name(0), "memory_stats": stats, "summary": summary}
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    del keep


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--case":
        run_case(sys.argv[2], sys.argv[3])
        return
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[2:] or list(CASES):
        env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=CASES[name][0])
        subprocess.run([sys.executable, __file__, "--case", name, outdir], env=env, check=True)
        print("recorded", name)


if __name__ == "__main__":
    main()
