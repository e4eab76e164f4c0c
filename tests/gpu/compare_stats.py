#!/usr/bin/env python3
"""Compares two allocator statistics files and reports every difference.

Each file is either a flat JSON object {"allocated_bytes.all.current": 123, ...} (what
bench_gpu_race --stats-dir and `allocscope-cli replay --stats-json` write) or a trace's
ground-truth JSON (tests/data/traces/W__C.json), whose statistics sit under "memory_stats".
Only the standard library: the GPU machine has python but nothing of ours installed.

    compare_stats.py EXPECTED ACTUAL [--keys PREFIX,...] [--quiet]

Exit status: 0 equal, 1 different, 2 unreadable input (the message says which file and why).
"""
import argparse
import json
import sys


def load_stats(path):
    try:
        with open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise ValueError(f"{path}: cannot read: {error.strerror}")
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON: {error.msg} at line {error.lineno} column {error.colno}")
    if isinstance(data, dict) and isinstance(data.get("memory_stats"), dict):
        data = data["memory_stats"]
    elif isinstance(data, dict) and isinstance(data.get("stats"), dict):
        data = data["stats"]
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of statistics, found {type(data).__name__}")
    stats = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{path}: statistic '{key}' is not a number: {value!r}")
        stats[key] = value
    if not stats:
        raise ValueError(f"{path}: holds no statistics")
    return stats


def compare(expected, actual, prefixes=None):
    """Returns a list of (key, expected value or None, actual value or None), sorted by key."""
    keys = sorted(set(expected) | set(actual))
    if prefixes:
        keys = [k for k in keys if any(k.startswith(p) for p in prefixes)]
    return [(k, expected.get(k), actual.get(k)) for k in keys if expected.get(k) != actual.get(k)]


def main(argv):
    parser = argparse.ArgumentParser(description="Compare two allocator statistics JSON files.")
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--keys", default="", help="comma-separated key prefixes to compare (default: all)")
    parser.add_argument("--quiet", action="store_true", help="print only the verdict line")
    args = parser.parse_args(argv)
    try:
        expected = load_stats(args.expected)
        actual = load_stats(args.actual)
    except ValueError as error:
        print(f"compare_stats: {error}", file=sys.stderr)
        return 2
    prefixes = [p for p in args.keys.split(",") if p]
    differences = compare(expected, actual, prefixes)
    compared = len([k for k in set(expected) | set(actual) if not prefixes or any(k.startswith(p) for p in prefixes)])
    if not args.quiet:
        for key, want, got in differences:
            want_text = "missing" if want is None else str(want)
            got_text = "missing" if got is None else str(got)
            delta = f" (delta {got - want:+})" if want is not None and got is not None else ""
            print(f"  {key}: expected {want_text}, actual {got_text}{delta}")
    if differences:
        print(f"DIFF {len(differences)} of {compared} keys differ ({args.expected} vs {args.actual})")
        return 1
    print(f"MATCH {compared} keys ({args.expected} vs {args.actual})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
