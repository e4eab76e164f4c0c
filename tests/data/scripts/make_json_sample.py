#!/usr/bin/env python3
"""Makes tests/data/samples/frag101__default.snapshot.json: the shared frag101__default.pickle
snapshot in the JSON form memory_viz also accepts (tuples become lists). A snapshot pickle is
plain data, so the standard library's pickle.load reads it without torch.

It also re-pickles the same snapshot with protocol 2 (BINPUT/BINGET memo and BINUNICODE strings,
no FRAME: the shape of PyTorch's C++ JIT pickler) and protocol 5 (Python 3.14's default), so the
reader is tested on every protocol PyTorch users produce.

Run from anywhere:  python3 tests/data/scripts/make_json_sample.py
"""
import json
import pathlib
import pickle

DATA = pathlib.Path(__file__).resolve().parent.parent
SRC = DATA / "traces" / "frag101__default.pickle"
DST = DATA / "samples" / "frag101__default.snapshot.json"


def main():
    with open(SRC, "rb") as f:
        snapshot = pickle.load(f)
    DST.parent.mkdir(parents=True, exist_ok=True)
    with open(DST, "w", encoding="utf-8") as f:
        # allow_nan=False: strict JSON, which is all our reader accepts.
        json.dump(snapshot, f, indent=1, allow_nan=False)
        f.write("\n")
    print(f"wrote {DST} ({DST.stat().st_size} bytes)")
    for protocol in (2, 5):
        out = DST.parent / f"frag101__default.protocol{protocol}.pickle"
        out.write_bytes(pickle.dumps(snapshot, protocol=protocol))
        print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
