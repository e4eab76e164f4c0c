#!/usr/bin/env python3
"""Counts the recordings that replay exact, folder by folder: the README's fidelity summary.

    fidelity_counts.py CLI [FOLDER ...]

CLI is a built allocscope-cli. Each FOLDER's *.pickle is replayed under its own config with
`allocscope-cli replay FILE --stats-json F` (plus --total-memory and --memory-fraction from a
ground-truth P.json beside it, where there is one, unless --no-flags), every device of the file
counted; a replay is exact when its verdict line says so. Where P.json holds PyTorch's
memory_stats the replay's statistics are compared key by key too, and the keys that differ are
named. Standard library only. Default folders: the shared traces, tests/data/replay,
tests/data/pools, pools-heldout, pools-heldout2, pools-heldout3, pools-heldout4,
pools-heldout5, pools-heldout6, pools-heldout7,
pools-heldout8, tests/data/oom and ../shared/field-snapshots.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.dirname(HERE)
# ../shared/field-snapshots beside the checkout, where present (other people's files).
DEFAULT = ["traces", "replay", "pools", "pools-heldout", "pools-heldout2", "pools-heldout3",
           "pools-heldout4", "pools-heldout5", "pools-heldout6",
           "pools-heldout7", "pools-heldout8", "oom",
           os.path.join(DATA, "..", "..", "..", "shared", "field-snapshots")]


def truth_of(pickle):
    path = pickle[:-len(".pickle")] + ".json"
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    return data if isinstance(data, dict) else None


def replay(cli, pickle, truth, flags):
    args = [cli, "replay", pickle]
    if flags and truth and truth.get("total_memory"):
        args += ["--total-memory", str(truth["total_memory"])]
        if truth.get("memory_fraction"):
            args += ["--memory-fraction", repr(truth["memory_fraction"])]
    with tempfile.TemporaryDirectory() as tmp:
        # Statistics only where there are PyTorch's to compare with (a file of several devices
        # takes --stats-json only with --device).
        stats = os.path.join(tmp, "stats.json")
        if isinstance((truth or {}).get("memory_stats"), dict):
            args += ["--stats-json", stats]
        run = subprocess.run(args, capture_output=True, text=True)
        verdicts = [line.strip()[len("verdict: "):] for line in run.stdout.splitlines()
                    if line.strip().startswith("verdict: ")]
        got = None
        if os.path.exists(stats):
            with open(stats, encoding="utf-8") as f:
                got = json.load(f)
    return verdicts, got


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    cli, rest = argv[0], argv[1:]
    flags = "--no-flags" not in rest
    folders = [f for f in rest if f != "--no-flags"] or DEFAULT
    for folder in folders:
        path = folder if os.path.isabs(folder) else os.path.join(DATA, folder)
        pickles = sorted(glob.glob(os.path.join(path, "*.pickle")))
        if not pickles:
            continue
        devices = exact = keyed = allkeys = 0
        notes = []
        for pickle in pickles:
            truth = truth_of(pickle)
            verdicts, got = replay(cli, pickle, truth, flags)
            name = os.path.basename(pickle)[:-len(".pickle")]
            devices += len(verdicts)
            exact += sum(v == "exact" for v in verdicts)
            for v in verdicts:
                if v != "exact":
                    notes.append(f"{name}: {v[:100]}")
            if not verdicts:
                notes.append(f"{name}: no verdict (refused or nothing to replay)")
            want = (truth or {}).get("memory_stats")
            if isinstance(want, dict) and got is not None and len(verdicts) == 1:
                keyed += 1
                differ = sorted(k for k, v in want.items() if got.get(k) != v)
                if not differ:
                    allkeys += 1
                elif verdicts == ["exact"]:
                    notes.append(f"{name}: exact; differs on {', '.join(differ)}")
        line = f"{os.path.basename(os.path.normpath(path))}: {len(pickles)} files, {exact} of {devices} device replays exact"
        if keyed:
            line += f", {allkeys} of {keyed} with PyTorch's statistics equal on every key"
        print(line)
        for note in notes:
            print("  " + note)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
