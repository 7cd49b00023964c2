#!/usr/bin/env bash
# Linking GPU work to calls without per-launch callbacks: records ResNet-18 b4 and ResNet-50 b64
# steps with the callbacks on every launch (the reference links) and CUPTI's queued/submitted
# kernel timestamps (GPUTRACE_CUPTI_LATENCY=1), then the paired step overhead of the candidate
# configurations. Library and analyzer from .devbin; results under $OUT/link/.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
F=$OUT/link; mkdir -p "$F"
L=$PWD/.devbin/lib/libgputrace.so
for m in "resnet18 4 30" "resnet50 64 12"; do
  set -- $m
  mkdir -p "$F/$1"
  echo "== record $1 $(date +%T)"
  LD_PRELOAD=$L GPUTRACE_DIR=$F/$1 GPUTRACE_CUPTI_LATENCY=1 GPUTRACE_VERBOSE=1 \
    python3 sample_apps/train.py --model "$1" --batch-size "$2" --steps "$3" --warmup 2 \
    >"$F/$1.log" 2>&1
  echo "rc=$?"; grep -i "latency\|queued" "$F/$1.log" | head -3
  python3 tools/bench/gtrace_count.py "$F/$1"/*.gtrace
done
echo "== paired resnet18 $(date +%T)"
python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models resnet18 \
  --procs "${R18_PROCS:-4}" --blocks "${R18_BLOCKS:-32}" \
  --configs "${CONFIGS:-gputrace,gputrace_latency,gputrace_cb_probe,gputrace_latency_probe,gputrace_cupti_off}" \
  2>&1 | tail -9
echo "== done $(date +%T)"
