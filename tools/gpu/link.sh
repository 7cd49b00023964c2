#!/usr/bin/env bash
# Kernels linked to their calls by CUPTI's queued timestamps (the default) instead of a callback
# pair per launch: records ResNet-18 b4 and ResNet-50 b64 steps in the default mode and with
# GPUTRACE_CUPTI_CALLBACKS=1 (a callback pair for every kernel too: the reference the queued-time
# links are compared with, here after the run), then the paired step overhead. Library and
# analyzer from .devbin; results under $OUT/link/.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
F=$OUT/link; mkdir -p "$F"
L=$PWD/.devbin/lib/libgputrace.so
for m in "resnet18 4 30" "resnet50 64 12"; do
  set -- $m
  for mode in auto 1; do
    mkdir -p "$F/$1_$mode"
    echo "== record $1 callbacks=$mode $(date +%T)"
    LD_PRELOAD=$L GPUTRACE_DIR=$F/$1_$mode GPUTRACE_CUPTI_CALLBACKS=$mode GPUTRACE_VERBOSE=1 \
      python3 sample_apps/train.py --model "$1" --batch-size "$2" --steps "$3" --warmup 2 \
      >"$F/$1_$mode.log" 2>&1
    echo "rc=$?"; grep -i "queued\|callbacks on" "$F/$1_$mode.log" | head -3
    python3 tools/bench/gtrace_count.py "$F/$1_$mode"/*.gtrace
  done
done
echo "== paired resnet18 $(date +%T)"
python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models resnet18 \
  --procs "${R18_PROCS:-5}" --blocks "${R18_BLOCKS:-32}" \
  --configs "${CONFIGS:-gputrace,gputrace_launch_callbacks,gputrace_cupti_off,torch_profiler}" \
  2>&1 | tail -9
mv "$F/paired.md" "$F/paired_r18.md"
if [ "${R50:-1}" = 1 ]; then
  echo "== paired resnet50 $(date +%T)"
  python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models resnet50 \
    --procs 2 --blocks 12 --configs gputrace,gputrace_launch_callbacks 2>&1 | tail -5
  mv "$F/paired.md" "$F/paired_r50.md"
fi
echo "== done $(date +%T)"
