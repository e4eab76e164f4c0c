#!/usr/bin/env bash
# The GPU machine's proof for the Python helper (issue 38), in one command: a headless Release
# build of liballocscope_torch.so and allocscope-cli, tests/gpu/torch_proof.py (GPT-2 training and
# Llama generation on c10, c10 + _record_memory_history and AllocScope, default and
# expandable_segments:True, each run in a fresh process), then compute-sanitizer memcheck over a
# short AllocScope run.
#
#   SRC=DIR SQLITE_INCLUDE=DIR tests/gpu/run_torch_proof.sh OUTDIR [quick]
#
# SRC (default .): the source tree to build (a clean export of a commit). SQLITE_INCLUDE: a folder
# holding sqlite3.h, for a machine that has libsqlite3.so.0 but not its headers (the session
# needs the storage library). `quick`: 12 training steps and 6 generate() calls per run, to see
# that everything runs. Results: OUTDIR/summary.txt, OUTDIR/torch_proof.{json,txt},
# OUTDIR/results.tar.gz (logs).
set -u
OUT=${1:?usage: run_torch_proof.sh OUTDIR [quick]}
MODE=${2:-full}
ROOT=$(cd "${SRC:-.}" && pwd)
B=${B:-$ROOT/build-device}
LOGS=$OUT/logs
mkdir -p "$LOGS"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA_HOME/bin:$PATH

say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' 2>&1 | tee -a "$SUMMARY"
date -u | tee -a "$SUMMARY"

say "== build (Release, headless)"
SQLITE_ARGS=()
if [ -n "${SQLITE_INCLUDE:-}" ]; then
    SQLITE_SO=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ { print $NF; exit }')
    SQLITE_ARGS=(-DSQLite3_INCLUDE_DIR="$SQLITE_INCLUDE" -DSQLite3_LIBRARY="$SQLITE_SO")
    say "sqlite3: headers from $SQLITE_INCLUDE, library $SQLITE_SO"
fi
if ! cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DALLOCSCOPE_WITH_GUI=OFF \
        -DALLOCSCOPE_BUILD_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON "${SQLITE_ARGS[@]}" >"$LOGS/cmake.log" 2>&1; then
    say "cmake configure FAILED"; tail -30 "$LOGS/cmake.log" | tee -a "$SUMMARY"; exit 1
fi
grep "AllocScope:" "$LOGS/cmake.log" | tee -a "$SUMMARY"
if ! cmake --build "$B" -j"$(nproc)" --target allocscope_torch allocscope-cli >"$LOGS/build.log" 2>&1; then
    say "build FAILED"; grep -E "error|Error" "$LOGS/build.log" | head -30 | tee -a "$SUMMARY"
    tar -C "$OUT" -czf "$OUT/results.tar.gz" logs; exit 1
fi
LIB=$B/app/torch/liballocscope_torch.so
CLI=$B/app/allocscope-cli
ls -l "$LIB" | tee -a "$SUMMARY"
date -u | tee -a "$SUMMARY"

say "== proof (torch_proof.py)"
STEPS=(); [ "$MODE" = quick ] && STEPS=(--steps 12 --gen-steps 6)
# torch_proof.{json,txt} are re-written into OUTDIR after every child: a run stopped early keeps them.
python3 "$ROOT/tests/gpu/torch_proof.py" "$OUT" --work "${WORK:-$B/proof}" --package "$ROOT/app/torch/python" \
    --library "$LIB" --cli "$CLI" "${STEPS[@]}" >"$LOGS/proof.log" 2>&1
echo "exit $?" >>"$LOGS/proof.log"
cat "$OUT/torch_proof.txt" >>"$SUMMARY" 2>/dev/null || tail -20 "$LOGS/proof.log" | tee -a "$SUMMARY"
tail -1 "$LOGS/proof.log" | tee -a "$SUMMARY"
date -u | tee -a "$SUMMARY"

say "== compute-sanitizer memcheck (AllocScope side, expandable_segments:True, 3 steps, 2 generate calls)"
SAN=$(command -v compute-sanitizer || ls "$CUDA_HOME"/bin/compute-sanitizer 2>/dev/null | head -1)
say "compute-sanitizer: ${SAN:-not found}"
# No --leak-check: neither c10 nor AllocScope returns its cached segments at exit (os._exit).
CUBLAS_WORKSPACE_CONFIG=:4096:8 timeout "${MEMCHECK_TIMEOUT:-200}" "$SAN" --tool memcheck --error-exitcode 9 \
    python3 "$ROOT/tests/gpu/torch_proof.py" --child allocscope expandable_segments:True "$LOGS/memcheck.json" \
    --steps 3 --gen-steps 2 --package "$ROOT/app/torch/python" --library "$LIB" --session "$B/memcheck.allocscope" \
    >"$LOGS/memcheck.txt" 2>&1
echo "exit $?" >>"$LOGS/memcheck.txt"
say "memcheck: $(grep -E 'ERROR SUMMARY' "$LOGS/memcheck.txt" | sed 's/=* *//') $(tail -1 "$LOGS/memcheck.txt")"
grep -E "^=+ (Invalid|Program hit|Saved host)" "$LOGS/memcheck.txt" | head -5 | tee -a "$SUMMARY"
date -u | tee -a "$SUMMARY"
tar -C "$OUT" -czf "$OUT/results.tar.gz" logs && rm -rf "$LOGS"
exit 0
