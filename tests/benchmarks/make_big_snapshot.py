#!/usr/bin/env python3
"""Writes a large PyTorch memory snapshot pickle that follows a real trace's pattern.

    make_big_snapshot.py SOURCE.pickle OUT.pickle [--size-mb 100]

The source (e.g. tests/data/traces/train_gpt__default.pickle, a real torch 2.11 trace) is cut
into prefix + body + suffix, where the body is the longest stretch that starts and ends with the
same live blocks and has no segment event inside: a training step, in train_gpt's case. The
output repeats the body until the file reaches the wanted size:

    prefix, body x N, suffix      (times shifted so they keep increasing)

Because the allocator state (segments and live blocks, hence every free block) is the same at both
ends of the body, each repetition makes the same decisions at the same addresses, and the whole
trace still replays exactly under the source's settings, ending in the source's final segments.
record_function annotations inside the body are repeated with it. Each entry is a new dict with
its own frames list of shared frame dicts, as PyTorch's pickle writes them, so the file has a real
snapshot's shape and size.
Standard library only.
"""
import argparse
import copy
import pickle
import sys

SEGMENT_ACTIONS = {"segment_alloc", "segment_free", "segment_map", "segment_unmap", "oom"}


def find_body(trace):
    """The longest [p, q) with the same live blocks at p and q, no free pending at either end
    (free_requested without its free_completed yet) and no segment event inside."""
    live = {}
    pending = set()
    digest = 0
    first_seen = {0: 0}
    best = (0, 0)
    for i, entry in enumerate(trace):
        action = entry["action"]
        if action in SEGMENT_ACTIONS:
            first_seen = {}
        elif action == "alloc":
            key = (entry["addr"], entry["size"])
            live[entry["addr"]] = key
            digest = (digest + hash(key)) & 0xFFFFFFFFFFFFFFFF
        elif action == "free_requested":
            key = live.pop(entry["addr"], None)
            if key is not None:
                digest = (digest - hash(key)) & 0xFFFFFFFFFFFFFFFF
                pending.add(entry["addr"])
        elif action == "free_completed":
            pending.discard(entry["addr"])
        position = i + 1
        if action in SEGMENT_ACTIONS:
            if not pending:
                first_seen[digest] = position
            continue
        if pending:
            continue
        start = first_seen.setdefault(digest, position)
        if position - start > best[1] - best[0]:
            best = (start, position)
    return best


def fresh(entry, shift):
    out = dict(entry)
    # A new frames list of the same frame dicts: PyTorch's pickle shares frame dicts between
    # entries through the memo (60 distinct ones for train_gpt's 26,939 frame references).
    out["frames"] = list(entry.get("frames", []))
    if "time_us" in out:
        out["time_us"] = entry["time_us"] + shift
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--size-mb", type=float, default=100.0)
    args = parser.parse_args()

    with open(args.source, "rb") as f:
        snapshot = pickle.load(f)
    traces = snapshot["device_traces"]
    device = next((d for d, t in enumerate(traces) if t), None)
    if device is None:
        sys.exit(f"make_big_snapshot: {args.source} has no trace entries")
    trace = traces[device]
    p, q = find_body(trace)
    if q - p < 2:
        sys.exit(f"make_big_snapshot: no repeatable stretch in {args.source}")
    prefix, body, suffix = trace[:p], trace[p:q], trace[q:]
    t_start = body[0].get("time_us", 0)
    t_end = suffix[0].get("time_us", body[-1].get("time_us", 0) + 1) if suffix else body[-1].get("time_us", 0) + 1
    period = max(1, t_end - t_start)
    annotations = snapshot.get("external_annotations", [])
    in_body = [a for a in annotations if a.get("device", device) == device and t_start <= a["time_us"] < t_end]

    # How many bodies make the wanted size: measure one, write, and correct once if the whole
    # file came out more than 10% off (memo references grow wider in a big pickle).
    target = int(args.size_mb * 1024 * 1024)
    base = len(pickle.dumps(snapshot, protocol=4))
    one = len(pickle.dumps([fresh(e, 0) for e in body], protocol=4))
    repeats = max(1, (target - base) // max(1, one) + 1)
    for attempt in range(2):
        size, entries = write(args.out, snapshot, traces, device, prefix, body, suffix, annotations, in_body,
                              t_start, t_end, period, repeats)
        if attempt == 1 or abs(size - target) <= target // 10:
            break
        per_body = max(1, (size - base) // repeats)
        repeats = max(1, (target - base) // per_body + 1)
    print(f"{args.out}: {size} bytes, {entries} entries (body of {len(body)} entries [{p}, {q}) x {repeats})")


def write(path, snapshot, traces, device, prefix, body, suffix, annotations, in_body, t_start, t_end, period, repeats):
    out_trace = [fresh(e, 0) for e in prefix]
    out_annotations = [a for a in annotations if a["time_us"] < t_start]
    for r in range(repeats):
        shift = r * period
        out_trace.extend(fresh(e, shift) for e in body)
        out_annotations.extend(dict(a, time_us=a["time_us"] + shift) for a in in_body)
    tail_shift = (repeats - 1) * period
    out_trace.extend(fresh(e, tail_shift) for e in suffix)
    out_annotations.extend(dict(a, time_us=a["time_us"] + tail_shift) for a in annotations if a["time_us"] >= t_end)

    out = dict(snapshot)
    out["device_traces"] = [out_trace if d == device else copy.deepcopy(t) for d, t in enumerate(traces)]
    out["external_annotations"] = out_annotations
    data = pickle.dumps(out, protocol=4)
    with open(path, "wb") as f:
        f.write(data)
    return len(data), len(out_trace)


if __name__ == "__main__":
    main()
