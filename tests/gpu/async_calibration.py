#!/usr/bin/env python3
"""Calibrates the simulated backend:cudaMallocAsync model against PyTorch on the GPU.

bench_gpu_async_calibration --out-dir DIR writes each demo workload's program (DIR/W.ops), the
model's peaks (DIR/model.tsv) and, with a GPU, the real default pool's (DIR/pool.tsv). This
script runs every DIR/W.ops under PyTorch with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,
one fresh process per program (history recording is refused under that backend, so it keeps
memory_stats() at the end and the peaks), writes DIR/torch.tsv and prints the model's error.

    async_calibration.py DIR            # all programs, table on stdout
    async_calibration.py --run W.ops    # one program in this process (JSON on stdout)

Ops: alloc ID SIZE STREAM | free ID | record_stream ID STREAM | complete ID | sync | empty_cache |
fraction F | reset_peak | reset_accumulated. Stream 0 is the default stream; every other id gets
its own torch.cuda.Stream. Standard library + torch only.
"""
import json
import os
import subprocess
import sys


def run_program(path):
    import torch  # imported here: PYTORCH_CUDA_ALLOC_CONF must be set before

    assert torch.cuda.is_available(), "no GPU"
    backend = torch.cuda.get_allocator_backend()
    torch.cuda.init()
    streams = {0: torch.cuda.default_stream()}
    tensors = {}
    ooms = 0
    ops = 0

    def stream(sid):
        if sid not in streams:
            streams[sid] = torch.cuda.Stream()
        return streams[sid]

    with open(path, "r", encoding="utf-8") as handle:
        for line in handle:
            parts = line.split()
            if not parts:
                continue
            ops += 1
            kind = parts[0]
            if kind == "alloc":
                tid, size, sid = int(parts[1]), int(parts[2]), int(parts[3])
                if size == 0:
                    continue
                try:
                    with torch.cuda.stream(stream(sid)):
                        tensors[tid] = torch.empty(size, dtype=torch.uint8, device="cuda")
                except torch.cuda.OutOfMemoryError:
                    ooms += 1
            elif kind == "free":
                tensors.pop(int(parts[1]), None)
            elif kind == "record_stream":
                tensor = tensors.get(int(parts[1]))
                if tensor is not None:
                    tensor.record_stream(stream(int(parts[2])))
            elif kind == "complete":
                pass  # the backend's stream-ordered frees complete on their own
            elif kind == "sync":
                torch.cuda.synchronize()
            elif kind == "empty_cache":
                torch.cuda.empty_cache()
            elif kind == "fraction":
                torch.cuda.set_per_process_memory_fraction(float(parts[1]))
            elif kind == "reset_peak":
                torch.cuda.reset_peak_memory_stats()
            elif kind == "reset_accumulated":
                pass  # PyTorch only warns under this backend
            else:
                raise ValueError(f"{path}: line {ops}: unknown op {kind!r}")
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    return {
        "backend": backend,
        "torch": torch.__version__,
        "ops": ops,
        "ooms": ooms,
        "peak_allocated": stats.get("allocated_bytes.all.peak", 0),
        "peak_reserved": stats.get("reserved_bytes.all.peak", 0),
        "memory_stats": {k: v for k, v in stats.items() if isinstance(v, (int, float))},
    }


def read_tsv(path):
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path, "r", encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        for line in handle:
            values = line.rstrip("\n").split("\t")
            rows[values[0]] = dict(zip(header, values))
    return rows


def error(model, truth):
    return "n/a" if truth == 0 else f"{100.0 * (model - truth) / truth:+.1f}%"


def calibrate(directory):
    model = read_tsv(os.path.join(directory, "model.tsv"))
    pool = read_tsv(os.path.join(directory, "pool.tsv"))
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="backend:cudaMallocAsync")
    results = {}
    for name in model:
        ops = os.path.join(directory, name + ".ops")
        done = subprocess.run([sys.executable, __file__, "--run", ops], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{name}: PyTorch run FAILED: {done.stderr.strip().splitlines()[-1:]}")
            continue
        results[name] = json.loads(done.stdout)
        with open(os.path.join(directory, name + ".torch.json"), "w", encoding="utf-8") as handle:
            json.dump(results[name], handle, indent=1, sort_keys=True)
    with open(os.path.join(directory, "torch.tsv"), "w", encoding="utf-8") as handle:
        handle.write("workload\tpeak_allocated\tpeak_reserved\tooms\n")
        for name, r in results.items():
            handle.write(f"{name}\t{r['peak_allocated']}\t{r['peak_reserved']}\t{r['ooms']}\n")
    mib = 1 << 20
    print("workload                 torch backend  torch peak res  model peak res  model err  pool peak res  pool err"
          "  alloc peak model/torch")
    for name, r in results.items():
        m = model[name]
        p = pool.get(name)
        tr = r["peak_reserved"]
        mr = int(m["peak_reserved"])
        pr = int(p["peak_reserved"]) if p else 0
        alloc_same = "equal" if int(m["peak_allocated"]) == r["peak_allocated"] else (
            f"{int(m['peak_allocated'])}/{r['peak_allocated']}")
        print(f"{name:24s} {r['backend']:14s} {tr / mib:12.1f}MiB {mr / mib:12.1f}MiB {error(mr, tr):>9s}"
              f" {pr / mib:11.1f}MiB {error(pr, tr) if p else 'n/a':>9s}  {alloc_same}"
              + (f"  ({r['ooms']} OOMs)" if r["ooms"] else ""))
    return 0 if len(results) == len(model) else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "--run":
        json.dump(run_program(argv[2]), sys.stdout)
        return 0
    if len(argv) == 2:
        return calibrate(argv[1])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
