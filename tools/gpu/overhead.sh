#!/usr/bin/env bash
# Issue 4 (CUPTI overhead on launch-bound steps): where the per-call cost goes, on the GPU machine.
# Uses the libgputrace.so and analyzer carried in .devbin (tools/gpu/pack_devbin.sh); builds only
# the launch_bound sample with nvcc. Writes $OUT/overhead/: launch_overhead.md (µs per launch / per
# torch op by configuration), overhead.md (ResNet-18 b4 steps, breakdown configs) and r50/ (a
# 20-step ResNet-50 b64 run recorded with `gputrace record`, for the converter's bytes per step).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/overhead; mkdir -p "$O"
LIB=$PWD/.devbin/lib/libgputrace.so
G=$PWD/.devbin/bin/gputrace
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvcc -O2 -arch=sm_90 -cudart=shared -Isample_apps sample_apps/launch_bound.cu -o /tmp/launch_bound \
  || exit 1
echo "== launch-bound loops $(date +%T)"
python3 tools/bench/launch_overhead.py bench --lib "$LIB" --sample /tmp/launch_bound --out "$O" \
  --repeats "${LO_REPEATS:-3}"
echo "== resnet18 b4 $(date +%T)"
GT_BENCH_MODELS=resnet18 \
GT_BENCH_CONFIGS=${R18_CONFIGS:-untraced,gputrace,gputrace_cb_off,gputrace_cupti_off,torch_profiler} \
  python3 tools/bench/train_overhead.py bench --lib "$LIB" --out "$O" --repeats "${R18_REPEATS:-3}"
if [ "${R50_TRACE:-1}" = 1 ]; then
  echo "== resnet50 trace $(date +%T)"
  "$G" record --lib "$LIB" -q -o /tmp/r50 -- python3 sample_apps/train.py --model resnet50 \
    --batch-size 64 --steps 20 --warmup 2 >"$O/r50_record.log" 2>&1
  echo "record rc=$?"; tail -30 "$O/r50_record.log"
  mkdir -p "$O/r50" && cp /tmp/r50.gputrace/*.gtrace "$O/r50/" 2>/dev/null
  ls -la /tmp/r50.gputrace /tmp/r50.perfetto-trace
fi
echo "== done $(date +%T)"
