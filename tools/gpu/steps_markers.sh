#!/usr/bin/env bash
# Step markers on the GPU (issue 21 item 2): tools/gpu/steps_markers.py recorded three times, its
# steps marked by torch.profiler (ProfilerStep#N through emit_nvtx), by an NVTX range of its own,
# and not at all; the run folders come back for `gputrace report` on the analyzer's machine.
#
# Run from the repo root on the GPU machine:   OUT=<folder> bash tools/gpu/steps_markers.sh
# Output: $OUT/steps_markers.tar.gz  steps/<marker>/{run/*.gtrace,out.txt,err.txt}, steps/build.log
#         $OUT/steps_markers.txt     each run's rc and CORPUS line
# Then, here:  for m in profiler nvtx none; do gputrace report --json steps/$m/run; done
#   expect step_source_kind profiler_step / nvtx / kernel_pattern, median_ms within 10% of the
#   CORPUS line's step_ms_median; and `gputrace report --step-range ProfilerStep steps/profiler/run`
#   takes the same ranges ("user").  Time: about 2 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?OUT must name the folder for results}"
W=${STEPS_WORK:-/tmp/gputrace-steps}
rm -rf "$W" && mkdir -p "$W/steps"
# STEPS_LIB: a libgputrace.so built elsewhere (tools/gpu/pack_devbin.sh's .devbin): no build here.
if [ -n "${STEPS_LIB:-}" ]; then
  LIB=$(readlink -f "$STEPS_LIB")
else
  export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc} PATH=/usr/local/cuda/bin:$PATH
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTRACE_BUILD_ANALYZER=OFF \
    -DGPUTRACE_BUILD_TESTS=OFF -DGPUTRACE_BUILD_SAMPLES=OFF -DCUDA_HOME=/usr/local/cuda \
    >"$W/steps/build.log" 2>&1 && cmake --build build-gpu -j16 --target gputrace_preload \
    >>"$W/steps/build.log" 2>&1 || { tail -30 "$W/steps/build.log"; echo "build failed"; }
  LIB=$PWD/build-gpu/lib/libgputrace.so
fi
: >"$W/steps/steps_markers.txt"
for m in profiler nvtx none; do
  d=$W/steps/$m
  mkdir -p "$d/run"
  LD_PRELOAD="$LIB" GPUTRACE_DIR="$d/run" NVTX_INJECTION64_PATH="$LIB" \
    timeout 180 "${PYTHON:-python3}" tools/gpu/steps_markers.py --marker "$m" >"$d/out.txt" 2>"$d/err.txt"
  echo "$m rc=$? $(grep '^CORPUS' "$d/out.txt")" | tee -a "$W/steps/steps_markers.txt"
done
mkdir -p "$OUT"
cp "$W/steps/steps_markers.txt" "$OUT/"
tar czf "$OUT/steps_markers.tar.gz" -C "$W" steps
