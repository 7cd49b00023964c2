#!/usr/bin/env bash
# Issue 18 item 2 on the GPU machine: what each layer of gputrace, and CUPTI itself, adds to one
# launch-bound operation, whole processes (tools/bench/launch_overhead.py), against a minimal
# CUPTI client (tools/bench/cupti_floor.c) that shows CUPTI's own floor, and whether a detached
# CUPTI (cuptiFinalize) stops costing after a capture window. Carry .devbin (pack_devbin.sh).
#   LL_CONFIGS=... LL_REPEATS=4 tools/gpu/launch_layers.sh      results in $OUT/ll/
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/ll; mkdir -p "$O"
LIB=$PWD/.devbin/lib/libgputrace.so FLOOR=$PWD/.devbin/lib/libcupti_floor.so
[ -f "$LIB" ] && [ -f "$FLOOR" ] || { echo "no $LIB or $FLOOR: run tools/gpu/pack_devbin.sh here and carry .devbin"; exit 1; }
CUPTI=$(python3 - <<'PY'
import glob, os, site
for d in site.getsitepackages():
    for p in sorted(glob.glob(os.path.join(d, "nvidia", "**", "libcupti.so.13*"), recursive=True)):
        print(p); raise SystemExit
PY
)
echo "libcupti for the floor: ${CUPTI:-none found}" | tee "$O/log.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$O/log.txt" 2>&1
# The detach on the real CUPTI: two signal windows, the trace back for the analyzer here.
mkdir -p "$O/detach"
LD_PRELOAD=$LIB GPUTRACE_DIR=$O/detach GPUTRACE_CAPTURE=signal GPUTRACE_CUPTI_DETACH=1 GPUTRACE_VERBOSE=1 GPUTRACE_FLUSH_MS=50 \
  taskset -c 0-7 python3 tools/gpu/detach_check.py >"$O/detach/out.txt" 2>"$O/detach/err.txt"
echo "detach_check rc=$? $(grep -c 'CUPTI detached' "$O/detach/err.txt") detaches, $(grep -c 'CUPTI attached' "$O/detach/err.txt") attaches" | tee -a "$O/log.txt"
CONFIGS=${LL_CONFIGS:-untraced,disabled,wrappers_only,kernels,default,paused,after_window_keep,after_window_detach,floor_none,floor_kernels,floor_off,floor_finalized}
PYTHONUNBUFFERED=1 timeout "${LL_BUDGET_S:-500}" python3 tools/bench/launch_overhead.py bench --lib "$LIB" \
  --floor "$FLOOR" --cupti-lib "$CUPTI" --out "$O" --configs "$CONFIGS" --repeats "${LL_REPEATS:-4}" \
  --n "${LL_N:-3000}" --settle "${LL_SETTLE:-2.5}" --cpus "${LL_CPUS:-0-7}" 2>&1 | tee -a "$O/log.txt"
echo "== done $(date +%T)"
