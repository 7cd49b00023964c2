#!/usr/bin/env bash
# GPUTRACE_CUPTI_ANCHORS (experimental, branch exp/anchors) on the GPU.
# 1. The assumption: CUPTI numbers all API calls from one counter, so the kernels cuDNN/cuBLAS
#    launch carry correlation ids between the two anchors of their call. Recorded with a callback
#    pair on every launch as the reference (GPUTRACE_CUPTI_CALLBACKS=1); anchor_check.py counts
#    agreement.
# 2. What it costs: paired step overhead of the default, anchors (no queued timestamps, no launch
#    callbacks) and no links at all.
# Library and cupti_dump from .devbin; results under $OUT/anchors/. PART=check|r50|r18|all.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
F=$OUT/anchors; mkdir -p "$F"
L=$PWD/.devbin/lib/libgputrace.so
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PART=${PART:-all}
if [ "$PART" = check ] || [ "$PART" = all ]; then
  for m in "resnet18 4" "resnet50 64"; do
    set -- $m
    D=$F/rec_$1; rm -rf "$D"; mkdir -p "$D"
    LD_PRELOAD=$L GPUTRACE_DIR=$D GPUTRACE_CUPTI_ANCHORS=1 GPUTRACE_CUPTI_CALLBACKS=1 \
      python3 sample_apps/train.py --model "$1" --batch-size "$2" --steps 20 --warmup 2 >"$D/log" 2>&1
    echo "== $1 b$2 rc=$? $(grep -h 'steady state' "$D/log")"
    .devbin/bin/cupti_dump "$D"/*.gtrace >"$D/dump"
    python3 tools/gpu/anchor_check.py "$D/dump"
  done
fi
for model in resnet50 resnet18; do
  [ "$PART" = all ] || [ "$PART" = "${model/resnet/r}" ] || continue
  echo "== paired $model $(date +%T)"
  python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models "$model" \
    --procs "${PROCS:-6}" --blocks "$([ $model = resnet50 ] && echo 12 || echo 24)" \
    --configs "${CONFIGS:-gputrace,gputrace_anchors,gputrace_no_links}" 2>&1 | grep -v "^$\|^#"
  mv "$F/paired.md" "$F/paired_$model.md"
done
echo "== done $(date +%T)"
