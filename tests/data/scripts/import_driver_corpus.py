#!/usr/bin/env python3
"""Turns the output of tests/gpu/run_driver_placement.sh (summary.txt and corpus.tar.gz, unpacked)
into tests/data/driver-placement/measured/:

  NAME.txt            one sequence: the machine (GPU, driver, runtime, total memory, granularity),
                      how many runs there were and how many distinct address lists they gave,
                      both absolute and relative to each run's first address, then run 1's
                      placements ("m ID SIZE 0xADDRESS" / "r ID SIZE 0xBASE").
  pytorch_W__C.K.txt  run K of the real PyTorch program W under config C on the same machine:
                      its segment events ("segment_alloc 0xADDRESS SIZE", ...), in order.

  repeats/W__C.K.txt  (from tests/gpu/run_pytorch_repeats.sh) run K of W under C: the GPU, the
                      torch version, the 122 memory_stats() keys ("stat KEY VALUE") and the
                      segment events.

Usage: python3 tests/data/scripts/import_driver_corpus.py SUMMARY.txt UNPACKED_DIR
       python3 tests/data/scripts/import_driver_corpus.py --repeats REPEATS.txt UNPACKED_REPEATS_DIR
"""
import glob
import json
import os
import pickle
import sys

OUT = "tests/data/driver-placement/measured"


def placements(path):
    rows = [l.split() for l in open(path) if l.startswith(("m ", "r "))]
    return rows


def relative(rows):
    if not rows:
        return ()
    base = int(rows[0][3], 16)
    return tuple((r[0], r[1], r[2], int(r[3], 16) - base) for r in rows)


def main(summary, unpacked):
    machine = open(summary).read().splitlines()
    smi = machine[1]  # "NVIDIA H200, 580.159.04, 143771 MiB"
    os.makedirs(OUT, exist_ok=True)
    names = sorted({os.path.basename(f).rsplit(".", 2)[0] for f in glob.glob(f"{unpacked}/runs/*.txt")})
    for name in names:
        runs = sorted(glob.glob(f"{unpacked}/runs/{name}.*.txt"))
        lists = [placements(r) for r in runs]
        head = [l.rstrip("\n") for l in open(runs[0]) if not l.startswith(("m ", "r "))]
        with open(f"{OUT}/{name}.txt", "w") as f:
            f.write(f"# bench_gpu_driver_placement tests/data/driver-placement/sequences/{name}.seq\n")
            f.write(f"nvidia-smi {smi}\n")
            f.write("\n".join(head) + "\n")
            f.write(f"runs {len(runs)}\n")
            f.write(f"distinct_absolute {len({tuple(map(tuple, l)) for l in lists})}\n")
            f.write(f"distinct_relative {len({relative(l) for l in lists})}\n")
            for r in lists[0]:
                f.write(" ".join(r) + "\n")
    for path in sorted(glob.glob(f"{unpacked}/torch/*.txt")):
        stem, k, _ = os.path.basename(path).rsplit(".", 2)
        with open(f"{OUT}/pytorch_{stem}.{k}.txt", "w") as f:
            f.write(f"# tracegen.py --child {stem.replace('__', ' ')} (torch 2.11) run {k}, fresh process\n")
            f.write(f"nvidia-smi {smi}\n")
            f.write(open(path).read())


def repeats(summary, unpacked):
    head = open(summary).read().splitlines()[:2]  # "NVIDIA H200, 580.159.04", "torch 2.11.0+cu130 cuda 13.0"
    os.makedirs(f"{OUT}/repeats", exist_ok=True)
    for path in sorted(glob.glob(f"{unpacked}/*.json")):
        stem = os.path.basename(path)[: -len(".json")]
        info = json.load(open(path))
        snap = pickle.load(open(path[: -len(".json")] + ".pickle", "rb"))
        with open(f"{OUT}/repeats/{stem}.txt", "w") as f:
            f.write(f"# tests/gpu/run_pytorch_repeats.sh: {stem} (PYTORCH_CUDA_ALLOC_CONF='{info['PYTORCH_CUDA_ALLOC_CONF']}'"
                    f", memory fraction {info['memory_fraction']}), fresh process\n")
            f.write(f"nvidia-smi {head[0]}\n{head[1]}\ntotal_memory {info['total_memory']}\n")
            for key in sorted(info["memory_stats"]):
                f.write(f"stat {key} {info['memory_stats'][key]}\n")
            for e in snap["device_traces"][0]:
                if e["action"].startswith("segment"):
                    f.write(f"{e['action']} {hex(e['addr'])} {e['size']}\n")


if __name__ == "__main__":
    if sys.argv[1] == "--repeats":
        repeats(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1], sys.argv[2])
