#!/usr/bin/env python3
"""Makes the hostile-input corpus under tests/data/hostile/: malformed or malicious snapshot
pickles, snapshot JSON and RMM CSV logs. Each hostile file must make our readers raise exactly one
FormatError that names a byte offset or a line (never crash, hang or load); the files marked
`accepted` must load and import.

MANIFEST.tsv lists `kind/file<TAB>expectation`, one of
  text                 the error message must contain `text` (and name a byte or line);
  = message            the error message, location included, must be exactly `message`;
  accepted: summary    the file must read and import (storage::tracesFromSnapshot) without error,
                       and the imported traces must be exactly `summary` (see summarize() below).
tests/formats/CMakeLists.txt registers one CTest case per corpus file (10 s timeout each); the
case's runner looks its file up in MANIFEST.tsv and fails when the file is not listed.

Besides hostile bytes, the corpus holds what PyTorch 2.11 really writes at the edges (pytorch211()):
TorchDynamo's 2**64-1 line, private pool ids, ring buffers that lost their beginning, several
devices. Their exact expectations (error text and byte, or the import's summary) are computed here
from Python's own pickle and pickletools, independently of our reader.

It also writes hostile/frag101__expandable.opcodes: the byte offset of every opcode of the real
frag101__expandable.pickle, computed by Python's pickletools (independently of our reader), for
the test that truncates that pickle at every opcode boundary.

Run from anywhere:  python3 tests/data/scripts/make_hostile.py   (deterministic output)
"""
import collections
import json
import pathlib
import pickle
import pickletools
import struct

DATA = pathlib.Path(__file__).resolve().parent.parent
OUT = DATA / "hostile"
REAL = DATA / "traces" / "frag101__expandable.pickle"

manifest = []


def put(kind, name, data, expect):
    assert "\t" not in expect and "\n" not in expect
    path = OUT / kind / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    manifest.append(f"{kind}/{name}\t{expect}")


P4 = b"\x80\x04"


def le32(v):
    return struct.pack("<i", v)


def pickles():
    real = REAL.read_bytes()
    ops = list(pickletools.genops(real))
    # Cut inside the first long string operand (mid-opcode) and at an opcode boundary.
    # The real file is one FRAME: a cut file declares more than it has, caught before any opcode
    # runs. Without the FRAME (still valid protocol 4) the cut reaches the opcodes themselves.
    assert ops[1][0].name == "FRAME" and ops[2][2] == 11
    unframed = real[:2] + real[11:]
    mid = next(pos for op, arg, pos in ops if op.name == "SHORT_BINUNICODE" and len(arg) > 8)
    put("pickle", "truncated_frame.pickle", real[: mid + 5], "FRAME declares")
    put("pickle", "truncated_mid_string.pickle", unframed[: mid - 9 + 5], "SHORT_BINUNICODE needs")
    put("pickle", "truncated_at_opcode.pickle", unframed[: ops[len(ops) // 2][2] - 9], "no STOP")
    put("pickle", "empty.pickle", b"", "empty input")

    # Code execution and object construction: refused, never executed.
    put("pickle", "global_os_system.pickle", b"\x80\x02cos\nsystem\nq\x00X\x04\x00\x00\x00echo\x85R.", "GLOBAL")
    put("pickle", "stack_global_ordereddict.pickle", pickle.dumps(collections.OrderedDict(a=1), protocol=4),
        "STACK_GLOBAL")
    put("pickle", "reduce.pickle", P4 + b"N)R.", "REDUCE")
    put("pickle", "build.pickle", P4 + b"}}b.", "BUILD")
    put("pickle", "newobj.pickle", P4 + b"N)\x81.", "NEWOBJ")
    put("pickle", "newobj_ex.pickle", P4 + b"N)}\x92.", "NEWOBJ_EX")
    put("pickle", "inst.pickle", b"(ibuiltins\nobject\n.", "INST")
    put("pickle", "obj.pickle", P4 + b"(N)o.", "OBJ")
    put("pickle", "persid.pickle", b"Pfoo\n.", "PERSID")
    put("pickle", "binpersid.pickle", P4 + b"NQ.", "BINPERSID")
    put("pickle", "ext1.pickle", P4 + b"\x82\x01.", "EXT1")
    put("pickle", "next_buffer.pickle", b"\x80\x05\x97.", "out-of-band")
    put("pickle", "empty_set.pickle", P4 + b"\x8f.", "set")

    # Protocols.
    put("pickle", "protocol0_text.pickle", pickle.dumps({"segments": []}, protocol=0), "protocol 0/1")
    put("pickle", "protocol1_text_long.pickle", pickle.dumps({"segments": [1 << 70]}, protocol=1), "protocol 0/1")
    put("pickle", "protocol6.pickle", b"\x80\x06}.", "unsupported pickle protocol 6")
    put("pickle", "unknown_opcode.pickle", P4 + b"\xff.", "unknown pickle opcode 0xff")

    # Structure.
    put("pickle", "setitems_without_mark.pickle", P4 + b"}K\x01K\x02u.", "without a preceding MARK")
    put("pickle", "setitems_odd.pickle", P4 + b"}(K\x01u.", "odd number")
    put("pickle", "setitems_into_list.pickle", P4 + b"](K\x01K\x02u.", "not a dict")
    put("pickle", "append_to_dict.pickle", P4 + b"}K\x01a.", "not a list")
    put("pickle", "unhashable_key.pickle", P4 + b"}(]K\x01u.", "unhashable")
    put("pickle", "stack_underflow_append.pickle", P4 + b"a.", "stack underflow")
    put("pickle", "stack_underflow_stop.pickle", P4 + b".", "stack underflow")
    put("pickle", "stack_underflow_tuple3.pickle", P4 + b"K\x01\x87.", "stack underflow")
    put("pickle", "mark_hides_stack.pickle", P4 + b"](K\x01a.", "stack underflow")

    # Lengths past the end: must fail before allocating anything.
    put("pickle", "binunicode_past_end.pickle", P4 + b"X\xff\xff\xff\x7fabc", "needs 2147483647 more bytes")
    put("pickle", "binunicode8_huge.pickle", P4 + b"\x8d" + b"\xff" * 8 + b"abc", "truncated")
    put("pickle", "binbytes8_huge.pickle", P4 + b"\x8e" + struct.pack("<Q", 1 << 62) + b"x", "truncated")
    put("pickle", "frame_past_end.pickle", P4 + b"\x95" + struct.pack("<Q", 1 << 40) + b"}.", "FRAME declares")
    put("pickle", "long4_past_end.pickle", P4 + b"\x8b" + le32(0x7FFFFFFF) + b"\x01", "truncated")
    put("pickle", "long4_negative_length.pickle", P4 + b"\x8b" + le32(-1), "negative byte count")

    # Memo.
    put("pickle", "memo_get_unset.pickle", P4 + b"h\x05.", "memo index 5")
    put("pickle", "memo_long_get_huge.pickle", P4 + b"}\x94j\xff\xff\xff\xff.", "memo index 4294967295")

    # Text and numbers.
    put("pickle", "invalid_utf8.pickle", P4 + b"\x8c\x02\xc3\x28.", "invalid UTF-8")
    put("pickle", "utf8_surrogate.pickle", P4 + b"\x8c\x03\xed\xa0\x80.", "invalid UTF-8")
    put("pickle", "int_2pow64.pickle", pickle.dumps({"segments": [], "x": 1 << 64}, protocol=4),
        "does not fit in 64 bits")
    put("pickle", "int_below_min_int64.pickle", pickle.dumps({"segments": [], "x": -(1 << 63) - 1}, protocol=4),
        "does not fit in 64 bits")

    # Cycles and depth (nothing may recurse on the C++ stack).
    cyc = []
    cyc.append(cyc)
    put("pickle", "self_referential_list.pickle", pickle.dumps({"segments": cyc}, protocol=4), "expected a dict")
    d = {}
    d["segments"] = [d]
    put("pickle", "self_referential_dict.pickle", pickle.dumps(d, protocol=4), "missing key 'address'")
    n = 1_000_000
    put("pickle", "deep_list_1e6.pickle", P4 + b"]" * n + b"a" * (n - 1) + b".", "expected a dict")
    put("pickle", "deep_marks_1e6.pickle", P4 + b"(" * n, "no STOP")

    # Valid pickles that are not snapshots, or snapshots with wrong types.
    put("pickle", "top_level_int.pickle", pickle.dumps(42, protocol=4), "top level is an int")
    put("pickle", "top_level_str.pickle", pickle.dumps("segments", protocol=4), "top level is a str")
    put("pickle", "missing_segments.pickle", pickle.dumps({"device_traces": []}, protocol=4), "missing key 'segments'")
    snap = pickle.loads(real)
    snap["device_traces"][0][17]["size"] = "big"
    put("pickle", "wrong_type_trace_size.pickle", pickle.dumps(snap, protocol=4), "device_traces[0][17].size")
    snap = pickle.loads(real)
    snap["segments"][1]["blocks"][0]["state"] = 3
    put("pickle", "wrong_type_block_state.pickle", pickle.dumps(snap, protocol=4), "expected a str, found an int")
    snap = pickle.loads(real)
    snap["allocator_settings"]["expandable_segments"] = "yes"
    put("pickle", "wrong_type_setting.pickle", pickle.dumps(snap, protocol=4), "allocator_settings.expandable_segments")
    snap = pickle.loads(real)
    snap["device_traces"][0][3]["addr"] = -4096
    put("pickle", "negative_addr.pickle", pickle.dumps(snap, protocol=4), "negative value")

    offsets = "\n".join(str(pos) for _, _, pos in ops) + "\n"
    (OUT / "frag101__expandable.opcodes").write_text(offsets)


# ---- what PyTorch 2.11 writes at the edges -----------------------------------------------------

U64_MAX = 2**64 - 1  # TorchDynamo's line for a frame it has none for
MiB = 1024 * 1024
A0 = 0x7F0000000000  # device 0's segment
A1 = 0x7F4000000000  # device 1's segment
SETTINGS = {
    "PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1, "garbage_collection_threshold": 0.0,
    "expandable_segments": False, "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
    "pinned_use_cuda_host_register": False, "graph_capture_record_stream_reuse": False,
    "roundup_power2_divisions": {str(1 << i): 0 for i in range(16)},
}


def frame(filename, line, name):
    return {"name": name, "filename": filename, "line": line}


def entry(action, addr, size, time_us, frames=()):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": time_us,
            "compile_context": "N/A", "user_metadata": "", "frames": list(frames)}


def segment(device, address, blocks, pool=(0, 0), frames=()):
    total = sum(b["size"] for b in blocks)
    active = [b for b in blocks if b["state"] != "inactive"]
    return {"device": device, "address": address, "total_size": total,
            "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
            "active_size": sum(b["size"] for b in active), "requested_size": sum(b["requested_size"] for b in active),
            "stream": 0, "segment_type": "large", "segment_pool_id": pool, "is_expandable": False,
            "frames": list(frames), "blocks": blocks}


def block(address, size, requested, state, frames=()):
    return {"address": address, "size": size, "requested_size": requested, "state": state, "frames": list(frames)}


def program(base, t0, frames=()):
    """A 2 MiB segment; 512 and 1024 bytes allocated; the 512 freed: 5 entries, 1 final segment."""
    trace = [entry("segment_alloc", base, 2 * MiB, t0, frames), entry("alloc", base, 512, t0 + 1, frames),
             entry("alloc", base + 512, 1024, t0 + 2, frames), entry("free_requested", base, 512, t0 + 3, frames),
             entry("free_completed", base, 512, t0 + 4, frames)]
    blocks = [block(base, 512, 0, "inactive"), block(base + 512, 1024, 1024, "active_allocated", frames),
              block(base + 1536, 2 * MiB - 1536, 0, "inactive")]
    return trace, blocks


def snapshot(segments, traces, annotations=()):
    return {"segments": segments, "device_traces": traces, "allocator_settings": SETTINGS,
            "external_annotations": list(annotations)}


def informative(v):
    """Our reader's reading of a line / time / annotation device: None when it does not fit int64."""
    return None if v >= 2**63 else v


def summarize(snap):
    """What the runner prints for a file that reads and imports: per imported device (those with
    trace entries or segments; -1 is host memory, not imported), its entries (annotate and
    user_defined skipped, a legacy free counted twice), final segments, their distinct pool ids,
    the unknown lines of its distinct stacks, and the record_function marks placed on it."""
    devices = {d for d, t in enumerate(snap["device_traces"]) if t} | {s["device"] for s in snap["segments"] if s["device"] >= 0}
    parts = []
    for d in sorted(devices):
        trace = snap["device_traces"][d] if d < len(snap["device_traces"]) else []
        segs = [s for s in snap["segments"] if s["device"] == d]
        entries = sum(0 if e["action"] in ("annotate", "user_defined") else 2 if e["action"] == "free" else 1 for e in trace)
        stacks = set()
        for frames in [e["frames"] for e in trace] + [s["frames"] for s in segs] + [b["frames"] for s in segs for b in s["blocks"]]:
            if frames:
                stacks.add(tuple((f["filename"], informative(f["line"]), f["name"]) for f in frames))
        unknown = sum(1 for st in stacks for f in st if f[1] is None)
        phases = sum(1 for a in snap["external_annotations"] if informative(a["device"]) == d
                     and informative(a["time_us"]) is not None and a["stage"] in ("START", "END"))
        text = f"device {d}: entries {entries}, segments {len(segs)}"
        if segs:
            text += ", pools " + " ".join(f"({a},{b})" for a, b in sorted({tuple(s["segment_pool_id"]) for s in segs}))
        if unknown:
            text += f", unknown lines {unknown}"
        if phases:
            text += f", phases {phases}"
        parts.append(text)
    return "accepted: " + "; ".join(parts)


def op_at(data, pred):
    """The byte offset of the one opcode of `data` for which pred(name, arg) holds."""
    hits = [pos for op, arg, pos in pickletools.genops(data) if pred(op.name, arg)]
    assert len(hits) == 1, hits
    return hits[0]


def value_after_key(data, key):
    """The byte offset of the value stored under `key`, a dict key that occurs once in `data`."""
    ops = [(op.name, arg, pos) for op, arg, pos in pickletools.genops(data) if op.name != "MEMOIZE"]
    hits = [i for i, (name, arg, _) in enumerate(ops) if name.endswith("UNICODE") and arg == key]
    assert len(hits) == 1, hits
    return ops[hits[0] + 1][2]


def accept(kind, name, snap):
    data = pickle.dumps(snap, protocol=4) if kind == "pickle" else json.dumps(snap)
    put(kind, name, data, summarize(snap))


def refuse(name, snap, message, locate):
    """A pickle whose error is exactly `message (where, byte N)`, N found by locate(bytes)."""
    data = pickle.dumps(snap, protocol=4)
    put("pickle", name, data, f"= {message}, byte {locate(data)})")


def pytorch211():
    t0 = 1795559509375922
    # torch.compile: TorchDynamo's frames carry line 2**64-1; 2**63 does not fit int64 either. Both
    # are unknown, never an error; a negative line stays what it is.
    dynamo = [frame("fake_tensor.py", U64_MAX, "init_gpu_context"), frame("fake_tensor.py", 777, "__new__"),
              frame("eval_frame.py", -1, "_fn"), frame("tracegen4.py", 80, "w_compile_reduce_overhead")]
    trace, blocks = program(A0, t0, dynamo)
    blocks[1]["frames"] = [frame("builder.py", 2**63, "wrap_tensor")]
    accept("pickle", "compiled_unknown_lines.pickle", snapshot([segment(0, A0, blocks, pool=(0, 1))], [trace]))
    accept("json", "compiled_unknown_lines.json", snapshot([segment(0, A0, blocks, pool=(0, 1))], [trace]))

    # Times and annotation devices are informative too; markers that cannot be placed are dropped.
    trace, blocks = program(A0, t0)
    trace[2]["time_us"] = U64_MAX
    marks = [{"stage": "START", "name": "step", "device": 0, "time_us": t0},
             {"stage": "END", "name": "step", "device": 0, "time_us": t0 + 4},
             {"stage": "START", "name": "lost", "device": 2**63, "time_us": t0},
             {"stage": "END", "name": "lost", "device": 0, "time_us": U64_MAX},
             {"stage": "START", "name": "other_gpu", "device": 5, "time_us": t0}]
    accept("pickle", "unknown_times.pickle", snapshot([segment(0, A0, blocks)], [trace], marks))

    # A 2**64-1 where the replay needs the value is still an error, at that value's byte.
    trace, blocks = program(A0, t0)
    trace[1]["addr"] = U64_MAX
    refuse("huge_addr.pickle", snapshot([segment(0, A0, blocks)], [trace]),
           f"the range at address {U64_MAX} of 512 bytes runs past the end of the 64-bit address space "
           "(device_traces[0][1].addr", lambda d: op_at(d, lambda n, a: n == "LONG1" and a == U64_MAX))
    trace, blocks = program(A0, t0)
    trace[3]["size"] = U64_MAX
    refuse("huge_size.pickle", snapshot([segment(0, A0, blocks)], [trace]),
           f"the range at address {A0} of {U64_MAX} bytes runs past the end of the 64-bit address space "
           "(device_traces[0][3].size", lambda d: op_at(d, lambda n, a: n == "LONG1" and a == U64_MAX))
    trace, blocks = program(A0, t0)
    seg = segment(0, A0, blocks)
    seg["total_size"] = U64_MAX
    refuse("huge_segment_size.pickle", snapshot([seg], [trace]),
           f"the range at address {A0} of {U64_MAX} bytes runs past the end of the 64-bit address space "
           "(segments[0].total_size", lambda d: op_at(d, lambda n, a: n == "LONG1" and a == U64_MAX))

    # Pool ids: (0, 0) the default pool, (n, 0) a CUDA graph's, (0, n) a MemPool's; wrong shapes
    # and types are errors at the value.
    trace, blocks = program(A0, t0)
    for name, pool, message, locate in [
        ("pool_id_one_item.pickle", (1,), "expected 2 items, found 1 (segments[0].segment_pool_id",
         lambda d: op_at(d, lambda n, a: n == "TUPLE1")),
        ("pool_id_three_items.pickle", (1, 0, 0), "expected 2 items, found 3 (segments[0].segment_pool_id",
         lambda d: op_at(d, lambda n, a: n == "TUPLE3")),
        ("pool_id_str.pickle", "1,0", "expected a 2-tuple, found a str (segments[0].segment_pool_id",
         lambda d: value_after_key(d, "segment_pool_id")),
        ("pool_id_none.pickle", None, "expected a 2-tuple, found None (segments[0].segment_pool_id",
         lambda d: value_after_key(d, "segment_pool_id")),
        ("pool_id_float_item.pickle", (1.0, 0), "expected an int, found a float (segments[0].segment_pool_id[0]",
         lambda d: op_at(d, lambda n, a: n == "BINFLOAT" and a == 1.0)),
    ]:
        refuse(name, snapshot([segment(0, A0, blocks, pool=pool)], [trace]), message, locate)
    with_pool = [dict(e) for e in trace]
    with_pool[1]["pool_id"] = [1]  # newest PyTorch (PR #177717) puts the pool on trace entries
    refuse("entry_pool_id_one_item.pickle", snapshot([segment(0, A0, blocks)], [with_pool]),
           "expected 2 items, found 1 (device_traces[0][1].pool_id", lambda d: value_after_key(d, "pool_id"))
    accept("pickle", "graph_and_mempool_pools.pickle",
           snapshot([segment(0, A0, blocks, pool=(1, 0)), segment(0, A0 + 2 * MiB, program(A0 + 2 * MiB, t0)[1], pool=(0, 2)),
                     segment(0, A0 + 4 * MiB, program(A0 + 4 * MiB, t0)[1])], [trace]))

    # Ring buffers that overflowed (max_entries): the history starts with frees of blocks and
    # segments whose allocation is not in it. Reading and importing accept them.
    trace, blocks = program(A0, t0)
    lost = [entry("free_requested", A0 + 8 * MiB, 4096, t0 - 3), entry("free_completed", A0 + 8 * MiB, 4096, t0 - 2),
            entry("segment_free", A0 + 8 * MiB, 2 * MiB, t0 - 1)]
    accept("pickle", "ringbuf_free_first.pickle", snapshot([segment(0, A0, blocks)], [lost + trace]))
    accept("pickle", "stateonly_one_stray_entry.pickle",
           snapshot([segment(0, A0, blocks)], [[entry("free_completed", A0 + 8 * MiB, 4096, t0)]]))

    # Several devices: each device is imported on its own; a segment's device may lie beyond
    # device_traces (no history for it); -1 is host memory (not imported); below -1 is an error.
    trace0, blocks0 = program(A0, t0)
    trace1, blocks1 = program(A1, t0 + 100)
    accept("pickle", "two_devices.pickle",
           snapshot([segment(0, A0, blocks0), segment(1, A1, blocks1, pool=(0, 1))], [trace0, trace1]))
    accept("pickle", "device_beyond_traces.pickle",
           snapshot([segment(0, A0, blocks0), segment(2, A1, blocks1)], [trace0]))
    accept("pickle", "device_host_segment.pickle",
           snapshot([segment(0, A0, blocks0), segment(-1, A1, blocks1)], [trace0]))
    refuse("device_negative.pickle", snapshot([segment(0, A0, blocks0), segment(-2, A1, blocks1)], [trace0]),
           "negative device -2 (a segment's device is a CUDA device ordinal, or -1 for host memory) "
           "(segments[1].device", lambda d: op_at(d, lambda n, a: n == "BININT" and a == -2))


def jsons():
    put("json", "truncated.json", '{"segments": [', "unexpected end of input")
    put("json", "trailing_comma.json", '{"segments": [],}', "expected a string key")
    put("json", "nan.json", '{"segments": [], "x": NaN}', "expected a JSON value")
    put("json", "big_int.json", '{"segments": [], "x": 18446744073709551616}', "does not fit in 64 bits")
    put("json", "lone_surrogate.json", '{"segments": [], "x": "\\ud800"}', "surrogate")
    put("json", "control_char.json", '{"segments": [], "x": "a\tb"}', "control character")
    put("json", "invalid_utf8.json", b'{"segments": [], "x": "\xc3\x28"}', "invalid UTF-8")
    put("json", "trailing_data.json", '{"segments": []} {}', "after the JSON value")
    put("json", "deep_nesting_1e6.json", "[" * 1_000_000 + "]" * 1_000_000, "nesting deeper than")
    put("json", "wrong_type.json", '{"segments": [{"address": "0x10", "total_size": 1}]}', "segments[0].address")
    put("json", "second_line_error.json", '{\n  "segments": [\n    1,,\n  ]\n}', "line 3")
    text = ('{"segments": [], "device_traces": [[{"action": "alloc", "addr": 18446744073709551615, "size": 512, '
            '"frames": [{"filename": "fake_tensor.py", "line": 18446744073709551615, "name": "init_gpu_context"}]}]]}')
    put("json", "huge_addr.json", text, "= the range at address 18446744073709551615 of 512 bytes runs past the end "
        f"of the 64-bit address space (device_traces[0][0].addr, byte {text.index('18446744073709551615')})")
    text = '{"segments": [{"address": 4096, "total_size": 512, "segment_pool_id": [0]}]}'
    put("json", "pool_id_one_item.json", text,
        f"= expected 2 items, found 1 (segments[0].segment_pool_id, byte {text.index('[0]')})")


def csvs():
    H = "Thread,Time,Action,Pointer,Size,Stream\n"
    ok = "1,00:00:00.000001,allocate,0x7f0000000000,4096,0\n"
    put("csv", "empty.csv", "", "empty file")
    put("csv", "missing_header.csv", ok, "missing header")
    put("csv", "bom_crlf_bad_row.csv", ("\ufeff" + H + ok + "1,00:00:00.000002,allocate,0x7f00,-5,0\n")
        .replace("\n", "\r\n"), "line 3")
    put("csv", "extra_columns.csv", H + ok + "1,t,free,0x7f0000000000,4096,0,surplus\n", "7 fields")
    put("csv", "missing_column.csv", H + "1,t,allocate,0x10,4096\n", "5 fields")
    put("csv", "negative_size.csv", H + "1,t,allocate,0x10,-4096,0\n", "negative Size")
    put("csv", "huge_size.csv", H + "1,t,allocate,0x10,99999999999999999999,0\n", "does not fit in 64 bits")
    put("csv", "huge_pointer.csv", H + "1,t,allocate,0x1ffffffffffffffff,16,0\n", "does not fit in 64 bits")
    put("csv", "hex_size.csv", H + "1,t,allocate,0x10,0x100,0\n", "must be decimal")
    put("csv", "bad_pointer.csv", H + "1,t,allocate,0xZZ,16,0\n", "invalid Pointer")
    put("csv", "unknown_action.csv", H + "1,t,reallocate,0x10,16,0\n", "unknown Action")
    put("csv", "free_unknown_pointer.csv", H + ok + "1,t,free,0x7f0000001000,4096,0\n", "free of unknown pointer")
    put("csv", "double_free.csv", H + ok + "1,t,free,0x7f0000000000,4096,0\n" * 2, "free of unknown pointer")
    put("csv", "second_allocate_live.csv", H + ok + ok, "second allocate at live address")
    put("csv", "overlapping_allocate.csv", H + ok + "1,t,allocate,0x7f0000000800,16,0\n", "inside the live allocation")
    put("csv", "free_size_mismatch.csv", H + ok + "1,t,free,0x7f0000000000,512,0\n", "allocated with size 4096")
    put("csv", "null_allocate.csv", H + "1,t,allocate,0x0,16,0\n", "null pointer")
    put("csv", "nul_bytes.csv", H + "1,t,allocate,0x10\x00,16,0\n", "NUL byte")
    put("csv", "invalid_utf8.csv", (H + "1,t\xff,allocate,0x10,16,0\n").encode("latin-1"), "invalid UTF-8")
    put("csv", "quoted_field.csv", H + '1,"t",allocate,0x10,16,0\n', "quoted")
    put("csv", "line_10mb.csv", H + "1," + "x" * (10 * 1024 * 1024) + ",allocate,0x10,16,0\n", "bytes long")
    put("csv", "binary_pickle.csv", REAL.read_bytes()[:4096], "NUL byte")


def main():
    pickles()
    pytorch211()
    jsons()
    csvs()
    (OUT / "MANIFEST.tsv").write_text("\n".join(manifest) + "\n")
    print(f"wrote {len(manifest)} hostile files under {OUT}")


if __name__ == "__main__":
    main()
