#!/usr/bin/env bash
# Records the driver-placement corpus on a GPU machine, in one command (device time is scarce):
# builds bench_gpu_driver_placement with g++ alone (no CMake, no Qt), runs every sequence of
# tests/data/driver-placement/sequences REPEATS times, each run in a fresh process, and, when
# TRACEGEN names the shared traces' tracegen.py and python3 has torch, records real PyTorch runs
# of train_gpt under the default config and roundup_power2_divisions:4 TORCH_REPEATS times each
# (fresh processes) and lists their segment events.
#
#   tests/gpu/run_driver_placement.sh OUTDIR [REPEATS] [TORCH_REPEATS]
#
# SRC (default .): the source tree. Results: OUTDIR/summary.txt (machine, driver, whether each
# sequence gave the same addresses in every run) and OUTDIR/corpus.tar.gz (every run's output:
# runs/NAME.K.txt, torch/W__C.K.txt). tests/data/scripts/import_driver_corpus.py turns them into
# tests/data/driver-placement/measured/.
set -u
OUT=${1:?usage: run_driver_placement.sh OUTDIR [REPEATS] [TORCH_REPEATS]}
REPEATS=${2:-5}
TORCH_REPEATS=${3:-3}
ROOT=$(cd "${SRC:-.}" && pwd)
SEQ=$ROOT/tests/data/driver-placement/sequences
WORK=$(mktemp -d)
mkdir -p "$OUT" "$WORK/runs" "$WORK/torch"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$SUMMARY"
uname -r | tee -a "$SUMMARY"
date -u | tee -a "$SUMMARY"

TOOL=$WORK/bench_gpu_driver_placement
if ! g++ -O2 -std=c++20 -DALLOCSCOPE_HAVE_CUDA=1 -I"$ROOT" -I"$CUDA_HOME/include" -o "$TOOL" \
        "$ROOT/tests/benchmarks/bench_gpu_driver_placement.cpp" "$ROOT/allocator/device/cuda/CudaDriverApi.cpp" \
        "$ROOT/allocator/device/cuda/CudaError.cpp" -L"$CUDA_HOME/lib64" -lcudart_static -ldl -lrt -lpthread \
        >"$WORK/build.log" 2>&1; then
    say "build FAILED"; head -30 "$WORK/build.log" | tee -a "$SUMMARY"; exit 1
fi

say "== sequences ($REPEATS runs each, fresh processes; 'same' = every run printed the same addresses)"
for f in "$SEQ"/*.seq; do
    name=$(basename "$f" .seq)
    for k in $(seq 1 "$REPEATS"); do
        "$TOOL" "$f" >"$WORK/runs/$name.$k.txt" 2>&1 || echo "exit $?" >>"$WORK/runs/$name.$k.txt"
    done
    distinct=$(for k in $(seq 1 "$REPEATS"); do grep -E '^[mr] ' "$WORK/runs/$name.$k.txt" | md5sum; done | sort -u | wc -l)
    calls=$(grep -cE '^[mr] ' "$WORK/runs/$name.1.txt")
    say "$name: $calls placements, $distinct distinct address lists over $REPEATS runs"
done

if [ -n "${TRACEGEN:-}" ] && python3 -c 'import torch' 2>/dev/null; then
    say "== PyTorch train_gpt ($TORCH_REPEATS runs per config, fresh processes)"
    for cfg in default rup4; do
        conf=""
        [ "$cfg" = rup4 ] && conf="roundup_power2_divisions:4"
        for k in $(seq 1 "$TORCH_REPEATS"); do
            d=$WORK/torch/$cfg.$k
            mkdir -p "$d"
            PYTORCH_CUDA_ALLOC_CONF=$conf python3 "$TRACEGEN" --child train_gpt "$cfg" "$d" >"$d/log.txt" 2>&1
            python3 - "$d/train_gpt__$cfg.pickle" >"$WORK/torch/train_gpt__$cfg.$k.txt" <<'EOF'
import pickle, sys
snap = pickle.load(open(sys.argv[1], "rb"))
for e in snap["device_traces"][0]:
    if e["action"].startswith("segment"):
        print(e["action"], hex(e["addr"]), e["size"])
EOF
            rm -rf "$d"
        done
        distinct=$(for k in $(seq 1 "$TORCH_REPEATS"); do md5sum <"$WORK/torch/train_gpt__$cfg.$k.txt"; done | sort -u | wc -l)
        say "train_gpt__$cfg: $(wc -l <"$WORK/torch/train_gpt__$cfg.1.txt") segment events, $distinct distinct lists over $TORCH_REPEATS runs"
    done
else
    say "== PyTorch runs skipped (TRACEGEN unset or no torch)"
fi
tar -C "$WORK" -czf "$OUT/corpus.tar.gz" runs torch
rm -rf "$WORK"
