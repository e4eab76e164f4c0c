#!/usr/bin/env bash
# liballocscope_torch.so on the GPU machine: a headless Release build of the library,
# then tests/gpu/torch_abi_check.py under the pluggable allocator (recording into a session, with
# and without Python frames) and under PyTorch's own allocator; the two memory_stats() compared
# key by key, the sessions read back with python3's sqlite3.
#
#   SQLITE_INCLUDE=DIR tests/gpu/run_torch_abi.sh OUTDIR
#
# SRC (default .) is the source tree. The GPU machine has libsqlite3.so.0 but no sqlite3.h:
# SQLITE_INCLUDE is a folder holding a copy of it.
set -u
OUT=${1:?usage: run_torch_abi.sh OUTDIR}
ROOT=$(cd "${SRC:-.}" && pwd)
B=${B:-$ROOT/build-torch}
mkdir -p "$OUT" "$B"
S=$OUT/summary.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }
export PATH=/usr/local/cuda/bin:$PATH
say "== machine"; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee -a "$S"; date -u | tee -a "$S"
LIBSQLITE=$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 /lib/x86_64-linux-gnu/libsqlite3.so.0 2>/dev/null | head -1)
if ! cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DALLOCSCOPE_WITH_GUI=OFF -DALLOCSCOPE_BUILD_TESTS=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON -DSQLite3_INCLUDE_DIR="$SQLITE_INCLUDE" -DSQLite3_LIBRARY="$LIBSQLITE" \
        >"$B.cmake.log" 2>&1; then
    say "cmake FAILED"; tail -20 "$B.cmake.log" | tee -a "$S"; exit 1
fi
grep "AllocScope:" "$B.cmake.log" | tee -a "$S"
if ! cmake --build "$B" -j"$(nproc)" --target allocscope_torch >"$B.build.log" 2>&1; then
    say "build FAILED"; grep -E "error" "$B.build.log" | head -20 | tee -a "$S"; exit 1
fi
LIB=$B/app/torch/liballocscope_torch.so
say "== pluggable (recording, OOM raised as the Python helper asks)"
ALLOCSCOPE_OOM_RAISES=1 ALLOCSCOPE_SESSION=$OUT/live.allocscope python3 "$ROOT/tests/gpu/torch_abi_check.py" "$LIB" pluggable "$OUT/pluggable.json" 2>&1 | tail -5 | tee -a "$S"
say "== pluggable (recording, Python frames)"
ALLOCSCOPE_PYTHON_FRAMES=1 ALLOCSCOPE_SESSION=$B/frames.allocscope python3 "$ROOT/tests/gpu/torch_abi_check.py" "$LIB" pluggable "$OUT/frames.json" 2>&1 | tail -5 | tee -a "$S"
say "== pluggable (not recorded)"
python3 "$ROOT/tests/gpu/torch_abi_check.py" "$LIB" pluggable "$OUT/plain.json" 2>&1 | tail -5 | tee -a "$S"
say "== c10"
python3 "$ROOT/tests/gpu/torch_abi_check.py" "$LIB" c10 "$OUT/c10.json" 2>&1 | tail -5 | tee -a "$S"
python3 - "$OUT" <<'PY' 2>&1 | tee -a "$S"
import json, sys
out = sys.argv[1]
r = {m: json.load(open(f"{out}/{m}.json")) for m in ("pluggable", "frames", "plain", "c10")}
ours, theirs = r["pluggable"]["stats"], r["c10"]["stats"]
keys = sorted(set(ours) | set(theirs))
diff = [k for k in keys if ours.get(k) != theirs.get(k)]
print(f"stats keys: ours {len(ours)}, c10 {len(theirs)}; differing {len(diff)}")
for k in diff[:40]:
    print(f"  {k}: ours {ours.get(k)} c10 {theirs.get(k)}")
for m, v in r.items():
    print(m, {k: v.get(k) for k in ("reused_while_side_busy", "reused_after_sync", "record_stream_rc", "checksum",
                                    "empty_free_ns", "oom", "torch_memory_stats", "session", "last_error", "total_memory")})
PY
# The sessions read with python's sqlite3 (the CLI needs more than this machine's toolchain
# is checked for): each run's status, its rows' and chunks' event counts, the summary, frames.
for f in "$OUT/live.allocscope" "$B/frames.allocscope"; do
    say "== session $f"
    python3 - "$f" <<'PY' 2>&1 | tee -a "$S"
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for row in db.execute("SELECT r.id, r.name, r.source_kind, r.source, r.config, r.gpu, r.total_memory, r.status, r.event_count, "
                      "(SELECT coalesce(sum(count), 0) FROM event_chunk c WHERE c.run = r.id), "
                      "(SELECT count(*) FROM summary s WHERE s.run = r.id) FROM run r"):
    print("run", row)
print("frames", db.execute("SELECT count(*) FROM frame").fetchone()[0], "stacks", db.execute("SELECT count(*) FROM stack_key").fetchone()[0],
      "run stacks", db.execute("SELECT count(*) FROM run_stack").fetchone()[0])
for row in db.execute("SELECT * FROM frame LIMIT 8"):
    print("  frame", row)
PY
done
ls -la "$OUT" | tee -a "$S"
grep -h "CUDAPluggableAllocator\|record_stream_fn\|set_release_pool\|emptyCache" \
    "$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')/include/torch/csrc/cuda/CUDAPluggableAllocator.h" \
    >"$OUT/pluggable_header.txt" 2>&1
rm -f "$OUT"/*.allocscope-wal "$OUT"/*.allocscope-shm
