#!/usr/bin/env bash
# One GPU session's evidence for issues 3-5 with the library and analyzer carried in .devbin:
# TSC clock (tsc.sh), capture range (capture.sh), kernel links
# (queued time vs callback pairs), paired step overhead (paired_overhead.py), and a 20-step ResNet-50
# `gputrace record` run for the Perfetto bytes per step. Results under $OUT/final/.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
F=$OUT/final; mkdir -p "$F"
export OUT=$F
mkdir -p build-gpu/lib build-gpu/sample_apps
cp .devbin/lib/libgputrace.so build-gpu/lib/
L=$PWD/build-gpu/lib/libgputrace.so
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvcc -O2 -arch=sm_90 -cudart=shared -Isample_apps sample_apps/launch_bound.cu \
  -o build-gpu/sample_apps/launch_bound || exit 1
echo "== tsc $(date +%T)"; timeout 120 bash tools/gpu/tsc.sh >"$F/tsc.log" 2>&1; tail -25 "$F/tsc.log"
echo "== capture $(date +%T)"; GT_LIB=$L timeout 120 bash tools/gpu/capture.sh 2>&1 | tail -12
echo "== linking modes $(date +%T)"
for m in auto 1; do
  mkdir -p "$F/link_$m"
  LD_PRELOAD=$L GPUTRACE_DIR=$F/link_$m GPUTRACE_CAPTURE=all GPUTRACE_CUPTI_LINK=queued \
    GPUTRACE_CUPTI_CALLBACKS=$m \
    GPUTRACE_VERBOSE=1 python3 /tmp/capture_app.py >"$F/link_$m.log" 2>&1
  echo "callbacks=$m rc=$?"; python3 tools/bench/gtrace_count.py "$F/link_$m"/*.gtrace
done
echo "== paired resnet18 $(date +%T)"
python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models resnet18 \
  --procs "${R18_PROCS:-5}" --blocks "${R18_BLOCKS:-40}" \
  --configs gputrace,gputrace_launch_callbacks,gputrace_cb_probe,gputrace_cupti_off,torch_profiler \
  2>&1 | tail -9
mv "$F/paired.md" "$F/paired_r18.md"
echo "== resnet50 record $(date +%T)"
.devbin/bin/gputrace record --lib "$L" -q -o /tmp/r50f -- python3 sample_apps/train.py \
  --model resnet50 --batch-size 64 --steps 20 --warmup 2 >"$F/r50_record.log" 2>&1
echo "record rc=$?"; grep -A3 "== steps" "$F/r50_record.log"
mkdir -p "$F/r50" && cp /tmp/r50f.gputrace/*.gtrace "$F/r50/"
ls -la /tmp/r50f.perfetto-trace
echo "== paired resnet50 $(date +%T)"
python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models resnet50 \
  --procs 2 --blocks 12 --configs gputrace,torch_profiler 2>&1 | tail -5
mv "$F/paired.md" "$F/paired_r50.md"
echo "== done $(date +%T)"
