#!/usr/bin/env bash
# Everything the GPU machine runs for the CUDA backend, in one command (device time is scarce):
# a headless Release build, the backend checks, the speed race against PyTorch's c10 allocator
# (default and expandable_segments:True), compute-sanitizer memcheck over the CUDA backend, and
# the replay of every shared trace (tests/data/traces, tests/data/replay) through the CUDA
# backend compared with its ground truth.
#
#   tests/gpu/run_device.sh OUTDIR [quick]
#
# Run from the repository root (test data are read from ./tests/data). SRC (default .) is the
# source tree to build: a clean export of a commit keeps others' unfinished files out of it.
# B (default SRC/build-device) is the build directory. `quick`: a short race (100,000 ops) and 3 traces, to check that
# everything builds and runs. Results: OUTDIR/summary.txt (the lines that matter) and
# OUTDIR/results.tar.gz (every log and statistics file), because only a few files come back.
# Needs cmake, ninja, g++, the CUDA toolkit; python3 with torch for the c10 race (without it the
# race runs without c10 and says so).
set -u
OUT=${1:?usage: run_device.sh OUTDIR [quick]}
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
JOBS=$(nproc)

say "== machine"
nvidia-smi -L 2>&1 | tee -a "$SUMMARY"
g++ --version | head -1 | tee -a "$SUMMARY"
date -u | tee -a "$SUMMARY"

say "== build (Release, headless)"
if ! cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DALLOCSCOPE_WITH_GUI=OFF \
        -DCMAKE_DISABLE_FIND_PACKAGE_Qt6=ON >"$LOGS/cmake.log" 2>&1; then
    say "cmake configure FAILED"; tail -30 "$LOGS/cmake.log" | tee -a "$SUMMARY"; exit 1
fi
grep "AllocScope:" "$LOGS/cmake.log" | tee -a "$SUMMARY"
if ! cmake --build "$B" -j"$JOBS" --target allocscope_allocator allocscope_formats allocscope_import \
        bench_gpu_checks bench_gpu_race >"$LOGS/build.log" 2>&1; then
    say "build FAILED"; grep -E "error|Error" "$LOGS/build.log" | head -30 | tee -a "$SUMMARY"; exit 1
fi
LIBS="$B/storage/liballocscope_import.a $B/allocator/liballocscope_allocator.a $B/storage/liballocscope_formats.a"
CXXFLAGS="-O3 -std=c++20 -DNDEBUG -DALLOCSCOPE_HAVE_CUDA=1 -I$ROOT"
CUDALIB="-L$CUDA_HOME/lib64 -lcudart_static -ldl -lrt -lpthread"
# The trace replay needs the importer; the CMake benchmark target gets it only through sqlite.
if g++ $CXXFLAGS -DALLOCSCOPE_GPU_WITH_IMPORT=1 -o "$B/bench_gpu_replay_import" "$ROOT/tests/benchmarks/bench_gpu_replay.cpp" \
        $LIBS $CUDALIB >"$LOGS/build_replay.log" 2>&1; then
    REPLAY=$B/bench_gpu_replay_import
else
    say "bench_gpu_replay build FAILED"; head -20 "$LOGS/build_replay.log" | tee -a "$SUMMARY"; REPLAY=
fi

# The race with c10: PyTorch's headers and libc10_cuda from the installed torch; our code links
# the shared runtime here too, so c10 and AllocScope share one CUDA runtime in the process.
RACE=$B/tests/benchmarks/bench_gpu_race
TORCH=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
if [ -n "$TORCH" ]; then
    ABI=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))' 2>/dev/null || echo 1)
    say "torch $(python3 -c 'import torch; print(torch.__version__)') at $TORCH (cxx11 abi $ABI)"
    if g++ $CXXFLAGS -D_GLIBCXX_USE_CXX11_ABI="$ABI" -DALLOCSCOPE_WITH_C10=1 -isystem "$TORCH/include" \
            -isystem "$CUDA_HOME/include" -o "$B/bench_gpu_race_c10" "$ROOT/tests/benchmarks/bench_gpu_race.cpp" \
            "$ROOT/tests/gpu/C10Backend.cpp" "$ROOT/tests/gpu/RaceStreams.cpp" $LIBS -L"$TORCH/lib" -lc10_cuda -lc10 \
            -L"$CUDA_HOME/lib64" -lcudart -ldl -lrt -lpthread -Wl,-rpath,"$TORCH/lib" -Wl,-rpath,"$CUDA_HOME/lib64" \
            >"$LOGS/build_c10.log" 2>&1; then
        RACE=$B/bench_gpu_race_c10
    else
        say "c10 race build FAILED (racing without c10)"; grep -E "error" "$LOGS/build_c10.log" | head -20 | tee -a "$SUMMARY"
    fi
else
    say "no torch in python3: racing without c10"
fi

say "== backend checks"
"$B/tests/benchmarks/bench_gpu_checks" >"$LOGS/checks.txt" 2>&1
echo "exit $?" >>"$LOGS/checks.txt"
cat "$LOGS/checks.txt" | tee -a "$SUMMARY"

say "== race (one process per config; tests/gpu/run_race.sh repeats it and summarises)"
RACE_ARGS=""
[ "$MODE" = quick ] && RACE_ARGS="--ops 100000"
for conf in "" "expandable_segments:True"; do
    name=${conf:-default}; name=${name%%:*}
    mkdir -p "$LOGS/stats_$name"
    PYTORCH_CUDA_ALLOC_CONF="$conf" "$RACE" $RACE_ARGS --stats-dir "$LOGS/stats_$name" >"$LOGS/race_$name.txt" 2>&1
    echo "exit $?" >>"$LOGS/race_$name.txt"
    cat "$LOGS/race_$name.txt" | tee -a "$SUMMARY"
    for seq in anchor train_gpt two_stream two_stream_events; do
        if [ -f "$LOGS/stats_$name/${seq}_c10_stats.json" ]; then
            python3 "$ROOT/tests/gpu/compare_stats.py" "$LOGS/stats_$name/${seq}_c10_stats.json" \
                "$LOGS/stats_$name/${seq}_allocscope_stats.json" >"$LOGS/race_${name}_${seq}_compare.txt" 2>&1
            tail -1 "$LOGS/race_${name}_${seq}_compare.txt" | tee -a "$SUMMARY"
        fi
    done
done

say "== compute-sanitizer memcheck"
SAN=$(command -v compute-sanitizer || ls "$CUDA_HOME"/bin/compute-sanitizer /usr/local/cuda*/bin/compute-sanitizer \
    /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1)
say "compute-sanitizer: ${SAN:-not found}"
# outOfMemoryIsNotAnError provokes a cudaMalloc OOM on purpose, which memcheck reports as an
# API error (2 of them: the call and the cleared error); it runs above, outside the sanitizer.
"$SAN" --tool memcheck --leak-check full --error-exitcode 9 "$B/tests/benchmarks/bench_gpu_checks" \
    --except outOfMemoryIsNotAnError >"$LOGS/memcheck_checks.txt" 2>&1
echo "exit $?" >>"$LOGS/memcheck_checks.txt"
grep -E "ERROR SUMMARY|LEAK SUMMARY|passed|^exit" "$LOGS/memcheck_checks.txt" | tee -a "$SUMMARY"
if [ -n "$REPLAY" ]; then
    "$SAN" --tool memcheck --leak-check full --error-exitcode 9 "$REPLAY" tests/data/traces/train_gpt__expandable.pickle \
        --touch --out-dir "$LOGS" >"$LOGS/memcheck_replay.txt" 2>&1
    echo "exit $?" >>"$LOGS/memcheck_replay.txt"
    grep -E "ERROR SUMMARY|LEAK SUMMARY|translated|^exit" "$LOGS/memcheck_replay.txt" | tee -a "$SUMMARY"
fi
PYTORCH_CUDA_ALLOC_CONF= "$SAN" --tool memcheck --leak-check full --error-exitcode 9 \
    "$B/tests/benchmarks/bench_gpu_race" --smoke >"$LOGS/memcheck_race_smoke.txt" 2>&1
echo "exit $?" >>"$LOGS/memcheck_race_smoke.txt"
grep -E "ERROR SUMMARY|LEAK SUMMARY|^exit" "$LOGS/memcheck_race_smoke.txt" | tee -a "$SUMMARY"

say "== trace replays through the CUDA backend (vs ground truth)"
if [ -n "$REPLAY" ]; then
    mkdir -p "$LOGS/replay"
    traces=$(ls tests/data/traces/*.pickle tests/data/replay/*.pickle 2>/dev/null)
    [ "$MODE" = quick ] && traces="tests/data/traces/frag101__default.pickle tests/data/traces/kv_growth_limited__expandable.pickle tests/data/traces/train_gpt__default.pickle"
    for t in $traces; do
        w=$(basename "$t" .pickle)
        truth=${t%.pickle}.json
        frac=$(python3 -c "import json,sys; f=json.load(open(sys.argv[1])).get('memory_fraction'); print('' if f is None else f)" "$truth")
        args=""
        [ -n "$frac" ] && args="--memory-fraction $frac"
        "$REPLAY" "$t" $args --out-dir "$LOGS/replay" >"$LOGS/replay/$w.txt" 2>&1
        echo "exit $?" >>"$LOGS/replay/$w.txt"
        grep -E "simulated|translated|direct|async|exit|replay:" "$LOGS/replay/$w.txt" | tee -a "$SUMMARY"
        for mode in translated direct; do
            echo -n "$w $mode vs ground truth: " | tee -a "$SUMMARY"
            python3 "$ROOT/tests/gpu/compare_stats.py" "$truth" "$LOGS/replay/$w.$mode.json" >"$LOGS/replay/$w.$mode.compare.txt" 2>&1
            tail -1 "$LOGS/replay/$w.$mode.compare.txt" | tee -a "$SUMMARY"
        done
        async_truth=tests/data/traces/${w%%__*}__async.json
        if [ "$(dirname "$t")" = tests/data/traces ] && [ "${w##*__}" = default ] && [ -f "$async_truth" ]; then
            echo -n "$w async vs ${w%%__*}__async.json: " | tee -a "$SUMMARY"
            python3 "$ROOT/tests/gpu/compare_stats.py" "$async_truth" "$LOGS/replay/$w.async.json" \
                --keys allocated_bytes.all,active_bytes.all,reserved_bytes.all >"$LOGS/replay/$w.async.compare.txt" 2>&1
            cat "$LOGS/replay/$w.async.compare.txt" | tee -a "$SUMMARY"
        fi
    done
fi
date -u | tee -a "$SUMMARY"
tar -C "$OUT" -czf "$OUT/results.tar.gz" logs && rm -rf "$LOGS"
exit 0
