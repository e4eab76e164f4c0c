#!/usr/bin/env python3
"""Makes the hostile-input corpus under tests/data/hostile/: malformed or malicious snapshot
pickles, snapshot JSON and RMM CSV logs. Each file must make our readers raise exactly one
FormatError that names a byte offset or a line (never crash, hang or load).

MANIFEST.tsv lists `kind/file<TAB>text the error message must contain`. tests/formats/CMakeLists.txt
registers one CTest case per corpus file (10 s timeout each); the case's runner looks its file up in
MANIFEST.tsv and fails when the file is not listed.

It also writes hostile/frag101__expandable.opcodes: the byte offset of every opcode of the real
frag101__expandable.pickle, computed by Python's pickletools (independently of our reader), for
the test that truncates that pickle at every opcode boundary.

Run from anywhere:  python3 tests/data/scripts/make_hostile.py   (deterministic output)
"""
import collections
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
    jsons()
    csvs()
    (OUT / "MANIFEST.tsv").write_text("\n".join(manifest) + "\n")
    print(f"wrote {len(manifest)} hostile files under {OUT}")


if __name__ == "__main__":
    main()
