#!/usr/bin/env bash
# The device run for `--gpu cuda:N` (run and replay on a real GPU), in one command:
#  1. a headless Release build of allocscope-cli and the GPU benchmarks;
#  2. bench_gpu_checks (the CudaDevice / cudaMallocAsync checks);
#  3. every shared trace (tests/data/traces, tests/data/replay) replayed with
#     `allocscope-cli replay T --gpu cuda:0 --stats-json F`, F compared with the trace's
#     ground-truth JSON (tests/gpu/compare_stats.py: all 122 keys);
#  4. every demo workload, default and expandable_segments:True, run with `run W --gpu cuda:0` and
#     with `run W --total-memory <the GPU's total>`: the event CSVs must be byte-identical;
#     plus backend:cudaMallocAsync on the real pool next to the simulated async model;
#  5. compute-sanitizer memcheck over `run` and `replay` on the GPU (memory touched);
#  6. the async-model calibration: every workload's program under PyTorch with
#     PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (tests/gpu/async_calibration.py) next to
#     the simulated model and the real pool (bench_gpu_async_calibration).
#
#   SRC=DIR tests/gpu/run_device_cli.sh OUTDIR
#
# Run from the repository root (test data are read from ./tests/data). SRC (default .) is the
# source tree to build (a clean export of a commit). Results: OUTDIR/summary.txt and
# OUTDIR/results.tar.gz (every log, CSV digest and statistics file).
set -u
OUT=${1:?usage: run_device_cli.sh OUTDIR}
ROOT=$(cd "${SRC:-.}" && pwd)
B=${B:-$ROOT/build-device}
LOGS=$OUT/logs
mkdir -p "$LOGS/replay" "$LOGS/run"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA_HOME/bin:$PATH

say "== machine"
nvidia-smi -L 2>&1 | tee -a "$SUMMARY"
date -u | tee -a "$SUMMARY"

say "== build (Release, headless)"
if ! cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DALLOCSCOPE_WITH_GUI=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON >"$LOGS/cmake.log" 2>&1; then
    say "cmake configure FAILED"; tail -30 "$LOGS/cmake.log" | tee -a "$SUMMARY"; exit 1
fi
grep "AllocScope:" "$LOGS/cmake.log" | tee -a "$SUMMARY"
if ! cmake --build "$B" -j"$(nproc)" --target allocscope-cli bench_gpu_checks bench_gpu_async_calibration >"$LOGS/build.log" 2>&1; then
    say "build FAILED"; grep -E "error|Error" "$LOGS/build.log" | head -30 | tee -a "$SUMMARY"; exit 1
fi
CLI=$B/app/allocscope-cli
"$CLI" gpus 2>&1 | grep cuda: | tee -a "$SUMMARY"
TOTAL=$("$CLI" gpus | awk -F'\t' '$1 == "cuda:0" { print $2 }')
say "cuda:0 total memory: $TOTAL"

say "== backend checks"
"$B/tests/benchmarks/bench_gpu_checks" >"$LOGS/checks.txt" 2>&1
echo "exit $?" >>"$LOGS/checks.txt"
cat "$LOGS/checks.txt" | tee -a "$SUMMARY"

say "== replay --gpu cuda:0 of every shared trace vs ground truth"
match=0; total=0
for t in tests/data/traces/*.pickle tests/data/replay/*.pickle; do
    w=$(basename "$t" .pickle)
    truth=${t%.pickle}.json
    frac=$(python3 -c "import json,sys; f=json.load(open(sys.argv[1])).get('memory_fraction'); print('' if f is None else f)" "$truth")
    args=""
    [ -n "$frac" ] && args="--memory-fraction $frac"
    "$CLI" replay "$t" --gpu cuda:0 $args --stats-json "$LOGS/replay/$w.json" >"$LOGS/replay/$w.txt" 2>&1
    echo "exit $?" >>"$LOGS/replay/$w.txt"
    total=$((total + 1))
    verdict=$(python3 tests/gpu/compare_stats.py "$truth" "$LOGS/replay/$w.json" 2>&1 | tail -1)
    case "$verdict" in MATCH*) match=$((match + 1));; esac
    say "$w: $(grep -E 'real-address order|decided differently|no GPU|CUDA' "$LOGS/replay/$w.txt" | head -1 | sed 's/^ *//')"
    grep -E '^  streams: ' "$LOGS/replay/$w.txt" | sed "s/^ */$w: /" | tee -a "$SUMMARY"
    say "$w: $(tail -1 "$LOGS/replay/$w.txt"); ${verdict%% (*}"
done
say "replay --gpu cuda:0: $match of $total traces give PyTorch's exact statistics"

say "== run --gpu cuda:0 vs run --total-memory $TOTAL (event CSVs)"
same=0; runs=0
for w in $("$CLI" workloads | awk '/^[a-z0-9-]+  \(gpu/ { print $1 }'); do
    for conf in "" "expandable_segments:True"; do
        tag=$w.${conf:-default}; tag=${tag%%:*}
        "$CLI" run "$w" --config "$conf" --total-memory "$TOTAL" --events-csv "$LOGS/run/$tag.sim.csv" >"$LOGS/run/$tag.sim.txt" 2>&1
        "$CLI" run "$w" --config "$conf" --gpu cuda:0 --events-csv "$LOGS/run/$tag.gpu.csv" >"$LOGS/run/$tag.gpu.txt" 2>&1
        echo "exit $?" >>"$LOGS/run/$tag.gpu.txt"
        runs=$((runs + 1))
        if cmp -s "$LOGS/run/$tag.sim.csv" "$LOGS/run/$tag.gpu.csv"; then verdict=IDENTICAL; same=$((same + 1)); else verdict=DIFFER; fi
        say "$tag: events $verdict ($(wc -l <"$LOGS/run/$tag.gpu.csv") lines); $(grep -E '^real-address order' "$LOGS/run/$tag.gpu.txt" | cut -c1-60); $(tail -1 "$LOGS/run/$tag.gpu.txt")"
        grep -E '^real streams' "$LOGS/run/$tag.gpu.txt" | sed "s/^/$tag: /" | tee -a "$SUMMARY"
        md5sum "$LOGS/run/$tag.sim.csv" "$LOGS/run/$tag.gpu.csv" >>"$LOGS/run/digests.txt"
        rm -f "$LOGS/run/$tag.sim.csv" "$LOGS/run/$tag.gpu.csv"
    done
    # backend:cudaMallocAsync: the real pool next to the simulated model (peak reserved).
    "$CLI" run "$w" --config backend:cudaMallocAsync >"$LOGS/run/$w.async.sim.txt" 2>&1
    "$CLI" run "$w" --config backend:cudaMallocAsync --gpu cuda:0 >"$LOGS/run/$w.async.gpu.txt" 2>&1
    echo "exit $?" >>"$LOGS/run/$w.async.gpu.txt"
    say "$w async model: $(grep -iE 'peak' "$LOGS/run/$w.async.sim.txt" | head -2 | tr -s ' ' | tr '\n' ';')"
    say "$w async real:  $(grep -iE 'peak' "$LOGS/run/$w.async.gpu.txt" | head -2 | tr -s ' ' | tr '\n' ';') $(tail -1 "$LOGS/run/$w.async.gpu.txt")"
done
say "run --gpu cuda:0: $same of $runs runs decide exactly as the simulated GPU of the same size"

say "== compute-sanitizer memcheck"
SAN=$(command -v compute-sanitizer || ls "$CUDA_HOME"/bin/compute-sanitizer 2>/dev/null | head -1)
say "compute-sanitizer: ${SAN:-not found}"
i=0
for cmd in "run llm-training --gpu cuda:0" "run llm-training --gpu cuda:0 --config expandable_segments:True" \
           "run multi-stream --gpu cuda:0 --config expandable_segments:True" "run multi-stream --gpu cuda:0" \
           "replay tests/data/replay/streams_record_stream.pickle --gpu cuda:0" \
           "replay tests/data/traces/train_gpt__expandable.pickle --gpu cuda:0" \
           "replay tests/data/traces/kv_growth_limited__default.pickle --gpu cuda:0" \
           "run fragmentation-101 --gpu cuda:0 --config backend:cudaMallocAsync"; do
    i=$((i + 1))
    "$SAN" --tool memcheck --leak-check full --error-exitcode 9 "$CLI" $cmd >"$LOGS/memcheck_$i.txt" 2>&1
    echo "exit $?" >>"$LOGS/memcheck_$i.txt"
    say "memcheck allocscope-cli $cmd: $(grep -E 'ERROR SUMMARY' "$LOGS/memcheck_$i.txt" | sed 's/=* *//') $(grep -E 'LEAK SUMMARY' "$LOGS/memcheck_$i.txt" | sed 's/=* *//'); $(tail -1 "$LOGS/memcheck_$i.txt")"
done
"$SAN" --tool memcheck --leak-check full --error-exitcode 9 "$B/tests/benchmarks/bench_gpu_checks" \
    --except outOfMemoryIsNotAnError >"$LOGS/memcheck_checks.txt" 2>&1
echo "exit $?" >>"$LOGS/memcheck_checks.txt"
say "memcheck bench_gpu_checks: $(grep -E 'passed' "$LOGS/memcheck_checks.txt" | tail -1) $(grep -E 'ERROR SUMMARY' "$LOGS/memcheck_checks.txt" | sed 's/=* *//'); $(tail -1 "$LOGS/memcheck_checks.txt")"
say "== async-model calibration against PyTorch (backend:cudaMallocAsync)"
mkdir -p "$LOGS/async"
"$B/tests/benchmarks/bench_gpu_async_calibration" --out-dir "$LOGS/async" >"$LOGS/async/bench.txt" 2>&1
echo "exit $?" >>"$LOGS/async/bench.txt"
tail -1 "$LOGS/async/bench.txt" | tee -a "$SUMMARY"
python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tee -a "$SUMMARY"
python3 tests/gpu/async_calibration.py "$LOGS/async" 2>&1 | tee -a "$SUMMARY"
rm -f "$LOGS"/async/*.ops
date -u | tee -a "$SUMMARY"
tar -C "$OUT" -czf "$OUT/results.tar.gz" logs && rm -rf "$LOGS"
exit 0
