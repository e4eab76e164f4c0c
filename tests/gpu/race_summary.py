#!/usr/bin/env python3
"""Summarises bench_gpu_race logs of several processes (tests/gpu/run_race.sh).

For each sequence, configuration and backend: min / median / max over the processes of the
best pass (ns/op) and of its ratio to c10's best pass in the same process, plus the same for
the median pass; then how many of the fidelity checks (CHECK lines) said MATCH, and whether the
target (AllocScope's ratio: median <= 0.40 and max <= 0.45) holds. Standard library only.

    race_summary.py LOG...
"""
import statistics
import sys
from collections import defaultdict

TARGET_MEDIAN = 0.40
TARGET_MAX = 0.45


def spread(values):
    return f"{min(values):7.3f} {statistics.median(values):7.3f} {max(values):7.3f}"


def main(paths):
    results = defaultdict(list)  # (sequence, config, backend) -> [(best, median, ratio_best, ratio_median)]
    checks = defaultdict(lambda: [0, 0])  # (sequence, config) -> [match, total]
    diffs = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) == 8 and fields[0] == "RESULT" and fields[1] != "sequence":
                    _, seq, config, backend, best, median, rbest, rmedian = fields
                    ratios = (float(rbest), float(rmedian)) if rbest != "-" else (float("nan"), float("nan"))
                    results[(seq, config, backend)].append((float(best), float(median)) + ratios)
                elif fields and fields[0] == "CHECK":
                    seq, config = fields[1], fields[2]
                    config = "expandable_segments:True" if config.startswith("expandable") else config
                    counts = checks[(seq, config)]
                    counts[1] += 1
                    if "MATCH" in line:
                        counts[0] += 1
                    else:
                        diffs.append(f"{path}: {line.strip()}")
    if not results:
        print("no RESULT lines: nothing raced")
        return 1
    print(f"{'sequence':<17} {'config':<25} {'backend':<11} {'n':>2}  {'best ns/op min med max':>27}  "
          f"{'ratio(best) min med max':>23}  {'ratio(median pass) min med max':>30}")
    for (seq, config, backend), rows in sorted(results.items()):
        best = [r[0] for r in rows]
        rbest = [r[2] for r in rows]
        rmed = [r[3] for r in rows]
        print(f"{seq:<17} {config:<25} {backend:<11} {len(rows):>2}  {min(best):8.1f} {statistics.median(best):8.1f} "
              f"{max(best):8.1f}  {spread(rbest):>23}  {spread(rmed):>30}")
    print("fidelity checks (stats + layout after the passes and mid-sequence, json compare):")
    for (seq, config), (match, total) in sorted(checks.items()):
        print(f"  {seq:<17} {config:<25} MATCH {match}/{total}")
    for line in diffs[:10]:
        print("  " + line)
    print(f"target: AllocScope on CUDA, ratio of best passes: median <= {TARGET_MEDIAN} and max <= {TARGET_MAX}")
    for (seq, config, backend), rows in sorted(results.items()):
        if backend != "allocscope":
            continue
        ratios = [r[2] for r in rows]
        med, top = statistics.median(ratios), max(ratios)
        verdict = "MET" if med <= TARGET_MEDIAN and top <= TARGET_MAX else (
            f"NOT MET (median {med:.3f} is {med - TARGET_MEDIAN:+.3f}, max {top:.3f} is {top - TARGET_MAX:+.3f} from the target)")
        print(f"  {seq:<17} {config:<25} {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
