#!/usr/bin/env python3
"""Writes a large PyTorch memory snapshot pickle that follows a real trace's pattern.

    make_big_snapshot.py SOURCE.pickle OUT.pickle [--size-mb 100] [--stream]

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

--stream writes the pickle opcode by opcode as Python's pickler would lay it out (protocol 4, lists
appended 1,000 items at a time, every dict, list and string memoised, repeated strings and the
shared frame dicts referred to through the memo), one body at a time, so its memory does not grow
with the output: for files of several GB (the default builds the whole object and pickles it, about
9 GB of RAM per GB written). Its file has the same entries, times and annotations as the default's
for the same number of bodies.
Standard library only.
"""
import argparse
import copy
import os
import pickle
import struct
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
    parser.add_argument("--stream", action="store_true", help="write incrementally in bounded memory (for GB files)")
    parser.add_argument("--bodies", type=int, default=0, help="repeat the body exactly N times (overrides --size-mb)")
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
    writer = write_streamed if args.stream else write
    if args.bodies > 0:
        repeats = args.bodies
    for attempt in range(2):
        size, entries = writer(args.out, snapshot, traces, device, prefix, body, suffix, annotations, in_body,
                              t_start, t_end, period, repeats)
        if attempt == 1 or args.bodies > 0 or abs(size - target) <= target // 10:
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


class StreamedPickle:
    """Emits pickle protocol 4 opcodes to a file. Memoises every str, dict, list and tuple as
    Python's pickler does (MEMOIZE); strings equal to one written before, and objects passed to
    shared(), are referred to through the memo (BINGET) instead of written again."""

    def __init__(self, f):
        self.f = f
        self.buf = []
        self.buffered = 0
        self.memo = 0
        self.strings = {}
        self.objects = {}
        self.size = 0

    def put(self, data):
        self.buf.append(data)
        self.buffered += len(data)
        if self.buffered >= 8 << 20:
            self.flush()

    def flush(self):
        data = b"".join(self.buf)
        self.f.write(data)
        self.size += len(data)
        self.buf = []
        self.buffered = 0

    def memoize(self):
        self.memo += 1
        return b"\x94"

    @staticmethod
    def get(index):
        return b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)

    @staticmethod
    def integer(v):
        if 0 <= v < 256:
            return b"K" + bytes([v])
        if 0 <= v < 65536:
            return b"M" + struct.pack("<H", v)
        if -(2**31) <= v < 2**31:
            return b"J" + struct.pack("<i", v)
        n = (v.bit_length() + 8) // 8
        return b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True)

    def encode(self, v, out):
        """Appends v's opcodes to the list `out`."""
        if v is None:
            out.append(b"N")
        elif v is True or v is False:
            out.append(b"\x88" if v else b"\x89")
        elif isinstance(v, int):
            out.append(self.integer(v))
        elif isinstance(v, float):
            out.append(b"G" + struct.pack(">d", v))
        elif isinstance(v, str):
            if v in self.strings:
                out.append(self.get(self.strings[v]))
                return
            data = v.encode("utf-8")
            out.append((b"\x8c" + bytes([len(data)]) if len(data) < 256 else b"X" + struct.pack("<I", len(data))) + data)
            self.strings[v] = self.memo
            out.append(self.memoize())
        elif id(v) in self.objects:
            out.append(self.get(self.objects[id(v)][0]))
        elif isinstance(v, dict):
            out.append(b"}")
            out.append(self.memoize())
            if v:
                out.append(b"(")
                for k, x in v.items():
                    self.encode(k, out)
                    self.encode(x, out)
                out.append(b"u")
        elif isinstance(v, (list, tuple)):
            self.items(v, out)
        else:
            raise TypeError(f"cannot write {type(v).__name__}")

    def items(self, v, out):
        if isinstance(v, tuple):
            out.append(b")" if not v else b"(")
            for x in v:
                self.encode(x, out)
            if v:
                out.append(b"t")
            out.append(self.memoize())
            return
        out.append(b"]")
        out.append(self.memoize())
        for start in range(0, len(v), 1000):
            batch = v[start:start + 1000]
            if len(batch) > 1:
                out.append(b"(")
            for x in batch:
                self.encode(x, out)
            out.append(b"e" if len(batch) > 1 else b"a")

    def shared(self, obj):
        """Writes obj and lets later references to the same object use the memo."""
        out = []
        index = self.memo  # a dict is memoised when opened, before its contents
        self.encode(obj, out)
        self.objects[id(obj)] = (index, obj)
        return out


def write_streamed(path, snapshot, traces, device, prefix, body, suffix, annotations, in_body, t_start, t_end, period,
                   repeats):
    """write()'s file, written one body at a time: memory stays that of one body's encoding."""
    with open(path, "wb") as f:
        w = StreamedPickle(f)

        # An entry whose strings and frames are all in the memo encodes the same every time but
        # for its time: kept as (bytes before the time, bytes after it, memo slots it takes).
        cache = {}

        def entry(e, shift, out):
            cached = cache.get(id(e))
            if cached is not None:
                out.append(cached[0])
                if cached[3] is not None:
                    out.append(w.integer(e["time_us"] + shift))
                out.append(cached[1])
                w.memo += cached[2]
                return
            before = w.memo
            known = len(w.strings) + len(w.objects)
            parts = []
            split = entry_uncached(e, shift, parts)
            if len(w.strings) + len(w.objects) == known:  # nothing new: the next time is the same
                if split is None:
                    cache[id(e)] = (b"".join(parts), b"", w.memo - before, None)
                else:
                    cache[id(e)] = (b"".join(parts[:split]), b"".join(parts[split + 1:]), w.memo - before, split)
            out.extend(parts)

        def entry_uncached(e, shift, out):
            """Appends e's opcodes; returns the index in `out` of its time's opcode (None: no time)."""
            split = None
            out.append(b"}")
            out.append(w.memoize())
            out.append(b"(")
            for k, x in e.items():
                w.encode(k, out)
                if k == "time_us":
                    split = len(out)
                    out.append(w.integer(x + shift))
                elif k == "frames":
                    out.append(b"]")
                    out.append(w.memoize())
                    frames = [fr for fr in x]
                    for start in range(0, len(frames), 1000):
                        batch = frames[start:start + 1000]
                        if len(batch) > 1:
                            out.append(b"(")
                        for fr in batch:
                            if id(fr) in w.objects:
                                out.append(w.get(w.objects[id(fr)][0]))
                            else:
                                out.extend(w.shared(fr))
                        out.append(b"e" if len(batch) > 1 else b"a")
                else:
                    w.encode(x, out)
            out.append(b"u")
            return split

        def entries(seq, shift):
            # device_traces[device]'s items, 1,000 per APPENDS; the caller opened the list
            for start in range(0, len(seq), 1000):
                batch = seq[start:start + 1000]
                out = [b"("] if len(batch) > 1 else []
                for e in batch:
                    entry(e, shift, out)
                out.append(b"e" if len(batch) > 1 else b"a")
                w.put(b"".join(out))

        w.put(b"\x80\x04")
        w.put(b"}" + w.memoize() + b"(")
        count = 0
        keys = list(snapshot.keys()) + ([] if "external_annotations" in snapshot else ["external_annotations"])
        for key in keys:
            value = snapshot.get(key)
            out = []
            w.encode(key, out)
            w.put(b"".join(out))
            if key == "device_traces":
                w.put(b"]" + w.memoize() + (b"(" if len(traces) > 1 else b""))
                for d, t in enumerate(traces):
                    w.put(b"]" + w.memoize())
                    if d != device:
                        # a device list built like the default's: its own entries, batched
                        entries(t, 0)
                        continue
                    # prefix, body x repeats, suffix, batched 1,000 at a time across their seams
                    pending = []
                    def feed(seq, shift):
                        nonlocal pending
                        for e in seq:
                            pending.append((e, shift))
                            if len(pending) == 1000:
                                flush_pending()
                    def flush_pending():
                        nonlocal pending
                        if not pending:
                            return
                        out = [b"("] if len(pending) > 1 else []
                        for e, shift in pending:
                            entry(e, shift, out)
                        out.append(b"e" if len(pending) > 1 else b"a")
                        w.put(b"".join(out))
                        pending = []
                    feed(prefix, 0)
                    for r in range(repeats):
                        feed(body, r * period)
                    feed(suffix, (repeats - 1) * period)
                    flush_pending()
                    count = len(prefix) + len(body) * repeats + len(suffix)
                w.put(b"e" if len(traces) > 1 else b"a")
            elif key == "external_annotations":
                w.put(b"]" + w.memoize())
                tail_shift = (repeats - 1) * period
                def annotation_stream():
                    yield from (a for a in annotations if a["time_us"] < t_start)
                    for r in range(repeats):
                        yield from (dict(a, time_us=a["time_us"] + r * period) for a in in_body)
                    yield from (dict(a, time_us=a["time_us"] + tail_shift) for a in annotations if a["time_us"] >= t_end)
                batch = []
                def flush_batch():
                    out = [b"("] if len(batch) > 1 else []
                    for a in batch:
                        w.encode(a, out)
                    out.append(b"e" if len(batch) > 1 else b"a")
                    w.put(b"".join(out))
                for a in annotation_stream():
                    batch.append(a)
                    if len(batch) == 1000:
                        flush_batch()
                        batch = []
                if batch:
                    flush_batch()
            else:
                out = []
                w.encode(value, out)
                w.put(b"".join(out))
        w.put(b"u.")
        w.flush()
        return w.size, count


if __name__ == "__main__":
    main()
