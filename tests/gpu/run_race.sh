#!/usr/bin/env bash
# The GPU race against PyTorch's c10 allocator, repeated: RUNS fresh processes per configuration
# (default, expandable_segments:True), alternating, each racing the op sequences in SEQUENCES
# (default anchor,train_gpt,two_stream,two_stream_events; the other two_stream markings of
# StreamFreeQueue: two_stream_ctr, two_stream_drv, two_stream_drvtail) with c10, AllocScope on CudaDevice and AllocScope on SimulatedDevice
# interleaved (tests/benchmarks/bench_gpu_race.cpp). Writes OUTDIR/summary.txt: the machine,
# min / median / max over the processes of each backend's best pass and of its ratio to c10
# (best pass / c10's best pass in the same process), the MATCH count of every fidelity check,
# and the first process's time breakdown; OUTDIR/race_logs.tar.gz holds every log.
#
#   SRC=DIR tests/gpu/run_race.sh OUTDIR [quick|full] [RUNS]
#
# Run from the repository root (the train_gpt trace is read from ./tests/data). SRC (default .)
# is the source tree to build; B (default SRC/build-race) the build directory. quick: 100,000
# ops, 2 passes, one process per configuration. BUDGET_S (default 480): no process is started
# once this many seconds have passed since the script began, so a device call ends in time;
# the summary says how many processes ran. Needs cmake, ninja, g++, the CUDA toolkit and python3
# with torch (c10's headers and libc10_cuda).
set -u
OUT=${1:?usage: run_race.sh OUTDIR [quick|full] [RUNS]}
MODE=${2:-full}
RUNS=${3:-5}
BUDGET_S=${BUDGET_S:-480}
SEQUENCES=${SEQUENCES:-anchor,train_gpt,two_stream,two_stream_events}
START=$(date +%s)
ROOT=$(cd "${SRC:-.}" && pwd)
B=${B:-$ROOT/build-race}
LOGS=$OUT/race_logs
mkdir -p "$LOGS"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH=$CUDA_HOME/bin:$PATH

say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') ($(nproc) cores visible)"
say "$(g++ --version | head -1); nvcc $(nvcc --version | grep -o 'release [0-9.]*')"
date -u | tee -a "$SUMMARY"

say "== build (Release, headless)"
if ! cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DALLOCSCOPE_WITH_GUI=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON >"$LOGS/cmake.log" 2>&1; then
    say "cmake configure FAILED"; tail -30 "$LOGS/cmake.log" | tee -a "$SUMMARY"; exit 1
fi
if ! cmake --build "$B" -j"$(nproc)" --target allocscope_allocator allocscope_formats allocscope_import \
        >"$LOGS/build.log" 2>&1; then
    say "build FAILED"; grep -E "error" "$LOGS/build.log" | head -30 | tee -a "$SUMMARY"; exit 1
fi
TORCH=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
[ -n "$TORCH" ] || { say "no torch in python3: no c10 to race"; exit 1; }
ABI=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))' 2>/dev/null || echo 1)
say "torch $(python3 -c 'import torch; print(torch.__version__)') at $TORCH (cxx11 abi $ABI)"
RACE=$B/bench_gpu_race_c10
# c10 and AllocScope share the shared CUDA runtime (libcudart), the one libc10_cuda uses.
if ! g++ -O3 -std=c++20 -DNDEBUG -DALLOCSCOPE_HAVE_CUDA=1 -DALLOCSCOPE_WITH_C10=1 -D_GLIBCXX_USE_CXX11_ABI="$ABI" \
        -I"$ROOT" -isystem "$TORCH/include" -isystem "$CUDA_HOME/include" -o "$RACE" \
        "$ROOT/tests/benchmarks/bench_gpu_race.cpp" "$ROOT/tests/gpu/C10Backend.cpp" "$ROOT/tests/gpu/RaceStreams.cpp" \
        "$B/storage/liballocscope_import.a" "$B/allocator/liballocscope_allocator.a" "$B/storage/liballocscope_formats.a" \
        -L"$TORCH/lib" -lc10_cuda -lc10 -L"$CUDA_HOME/lib64" -lcudart -ldl -lrt -lpthread \
        -Wl,-rpath,"$TORCH/lib" -Wl,-rpath,"$CUDA_HOME/lib64" >"$LOGS/build_c10.log" 2>&1; then
    say "c10 race build FAILED"; grep -E "error" "$LOGS/build_c10.log" | head -20 | tee -a "$SUMMARY"; exit 1
fi
say "built in $(( $(date +%s) - START )) s"

ARGS=""
if [ "$MODE" = quick ]; then ARGS="--ops 100000 --passes 2"; RUNS=1; fi
say "== race: $RUNS processes per configuration, alternating ($MODE: ${ARGS:-1,000,000 ops a sequence, 5 passes}; $SEQUENCES)"
ran=0
for run in $(seq 1 "$RUNS"); do
    for conf in "" "expandable_segments:True"; do
        name=${conf:-default}; name=${name%%:*}
        if [ $(( $(date +%s) - START )) -gt "$BUDGET_S" ]; then
            say "budget of $BUDGET_S s spent: run $run ($name) and later not started"; break 2
        fi
        extra="--skip-malloc"
        [ "$run" = 1 ] && extra=""
        mkdir -p "$LOGS/stats_${name}_$run"
        t0=$(date +%s)
        PYTORCH_CUDA_ALLOC_CONF="$conf" timeout 240 "$RACE" $ARGS $extra --sequences "$SEQUENCES" --stats-dir "$LOGS/stats_${name}_$run" \
            >"$LOGS/race_${name}_$run.txt" 2>&1
        rc=$?
        echo "exit $rc" >>"$LOGS/race_${name}_$run.txt"
        say "run $run $name: exit $rc in $(( $(date +%s) - t0 )) s"
        [ "$rc" = 0 ] || tail -5 "$LOGS/race_${name}_$run.txt" | tee -a "$SUMMARY"
        ran=$((ran + 1))
        for seq in ${SEQUENCES//,/ }; do
            if [ -f "$LOGS/stats_${name}_$run/${seq}_c10_stats.json" ]; then
                python3 "$ROOT/tests/gpu/compare_stats.py" "$LOGS/stats_${name}_$run/${seq}_c10_stats.json" \
                    "$LOGS/stats_${name}_$run/${seq}_allocscope_stats.json" --quiet >/dev/null 2>&1 \
                    && echo "CHECK $seq $name json compare_stats: MATCH" >>"$LOGS/race_${name}_$run.txt" \
                    || echo "CHECK $seq $name json compare_stats: DIFF" >>"$LOGS/race_${name}_$run.txt"
            fi
        done
    done
done

say "== summary over the processes (ratio = best pass / c10's best pass in the same process)"
python3 "$ROOT/tests/gpu/race_summary.py" "$LOGS"/race_*_[0-9]*.txt | tee -a "$SUMMARY"
say "== first process of each configuration, in full"
for name in default expandable_segments; do
    grep -E "^(device|c10 allocator|selftest|sequence|RESULT|breakdown|cuda device|CHECK|SLOW|allocscope events|last CUDA)" \
        "$LOGS/race_${name}_1.txt" 2>/dev/null | tee -a "$SUMMARY"
done
date -u | tee -a "$SUMMARY"
say "total $(( $(date +%s) - START )) s"
tar -C "$OUT" -czf "$OUT/race_logs.tar.gz" race_logs && rm -rf "$LOGS"
exit 0
