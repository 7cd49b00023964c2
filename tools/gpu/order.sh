#!/usr/bin/env bash
# Kernels linked by anchors and launch order (GPUTRACE_CUPTI_LINK=order, the default) on the GPU.
# 1. Recordings: ResNet-18 b4 and ResNet-50 b64 in the default mode and with a callback pair on
#    every launch as well (GPUTRACE_CUPTI_CALLBACKS=1, the reference); the order links found
#    without the pairs must agree with them (test_order_link real), and the converter and report
#    must link every kernel a wrapped call launched. Traces under $OUT/order/rec/.
# 2. What each way of linking costs: tools/bench/kernel_cost.py (CPU us per launch, GPU us per
#    kernel), then paired step overhead of ResNet-50 b64 and ResNet-18 b4 (PROCS processes each).
# PART=rec,cost,r50,r18 (default all). Library, analyzer and test_order_link from .devbin.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
F=$OUT/order; mkdir -p "$F/rec"
L=$PWD/.devbin/lib/libgputrace.so
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
has() { [[ ",${PART:-rec,cost,r50,r18}," == *",$1,"* ]]; }
if has rec; then
  for m in "resnet18 4 20" "resnet50 64 12"; do
    set -- $m
    for mode in order ref; do
      D=/tmp/order_$1_$mode; rm -rf "$D"; mkdir -p "$D"
      env $([ $mode = ref ] && echo GPUTRACE_CUPTI_CALLBACKS=1) LD_PRELOAD=$L GPUTRACE_DIR=$D \
        python3 sample_apps/train.py --model "$1" --batch-size "$2" --steps "$3" --warmup 2 >"$D.log" 2>&1
      echo "== $1 $mode rc=$? $(grep -h 'steady state' "$D.log")"
      cp "$D"/*.gtrace "$F/rec/$1_$mode.gtrace"
      [ $mode = ref ] && .devbin/bin/test_order_link real "$F/rec/$1_$mode.gtrace"
      .devbin/bin/gputrace convert "$D"/*.gtrace -o "$D.pftrace" 2>&1 | tail -1 | sed 's/.*records: //'
      .devbin/bin/gputrace report "$D"/*.gtrace 2>/dev/null | grep -A1 "^  links"
    done
  done
fi
if has cost; then
  echo "== kernel_cost $(date +%T)"
  python3 tools/bench/kernel_cost.py bench --lib "$L" --out "$F" --procs "${COST_PROCS:-2}" --blocks 24 \
    --configs gputrace,gputrace_queued,gputrace_launch_callbacks,gputrace_cupti_off 2>&1 | grep -v "^$\|^#"
fi
for model in resnet50 resnet18; do
  has "${model/resnet/r}" || continue
  echo "== paired $model $(date +%T)"
  python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models "$model" \
    --procs "${PROCS:-6}" --blocks "$([ $model = resnet50 ] && echo 12 || echo 24)" \
    --configs "${CONFIGS:-gputrace,gputrace_queued}" 2>&1 | grep -v "^$\|^#"
  mv "$F/paired.md" "$F/paired_$model.md"
done
echo "== done $(date +%T)"
