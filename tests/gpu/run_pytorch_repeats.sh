#!/usr/bin/env bash
# Records the shared traces' programs again on a GPU machine, each workload x config REPEATS times
# in fresh processes, to measure how much a real PyTorch run varies from run to run (segment
# addresses, and with them the 122 memory_stats() keys): the yardstick for what-if replays.
#
#   TRACEGEN=path/to/tracegen.py tests/gpu/run_pytorch_repeats.sh OUTDIR [REPEATS]
#
# Needs python3 with torch. WORK (default: a new temporary folder) holds the runs until the end. Results: OUTDIR/repeats.tar.gz (W__C.K.pickle and W__C.K.json, as
# tracegen.py writes them) and OUTDIR/repeats.txt (one line per run: seconds, peak reserved).
set -u
OUT=${1:?usage: run_pytorch_repeats.sh OUTDIR [REPEATS]}
REPEATS=${2:-3}
: "${TRACEGEN:?TRACEGEN must name tracegen.py of the shared traces}"
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$OUT/repeats.txt" 2>&1
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' >>"$OUT/repeats.txt" 2>&1
run() {  # workload config-name PYTORCH_CUDA_ALLOC_CONF
    for k in $(seq 1 "$REPEATS"); do
        d=$WORK/$1__$2.$k
        mkdir -p "$d"
        PYTORCH_CUDA_ALLOC_CONF=$3 python3 "$TRACEGEN" --child "$1" "$2" "$d" >"$d/log.txt" 2>&1
        if [ -f "$d/$1__$2.pickle" ]; then
            mv "$d/$1__$2.pickle" "$WORK/$1__$2.$k.pickle"
            mv "$d/$1__$2.json" "$WORK/$1__$2.$k.json"
            python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(sys.argv[2], round(j['seconds'],1), 's, peak reserved', j['memory_stats']['reserved_bytes.all.peak'])" \
                "$WORK/$1__$2.$k.json" "$1__$2.$k" >>"$OUT/repeats.txt"
        else
            echo "$1__$2.$k FAILED: $(tail -3 "$d/log.txt")" >>"$OUT/repeats.txt"
        fi
        rm -rf "$d"
    done
}
for c in "default:" "rup4:roundup_power2_divisions:4" "msplit128:max_split_size_mb:128" \
         "gc06_msplit256:garbage_collection_threshold:0.6,max_split_size_mb:256" "expandable:expandable_segments:True"; do
    run train_gpt "${c%%:*}" "${c#*:}"
    run frag101 "${c%%:*}" "${c#*:}"
done
run kv_growth_limited default ""
run kv_growth_limited expandable "expandable_segments:True"
tar -C "$WORK" -czf "$OUT/repeats.tar.gz" .
rm -rf "$WORK"
cat "$OUT/repeats.txt"
