#!/usr/bin/env bash
# Issue 18: the whole-process overhead on the GPU machine (tools/bench/whole_process.py), with the
# libgputrace.so carried in .devbin (tools/gpu/pack_devbin.sh). Results in $OUT/wp/.
#   WP_MODEL=resnet18 WP_CONFIGS=untraced,default,... WP_PROCS=5 WP_BUDGET=480 tools/gpu/whole_process.sh
# Several models: WP_MODEL="resnet18 resnet50" (each gets WP_BUDGET / number of models).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/wp; mkdir -p "$O"
LIB=$PWD/.devbin/lib/libgputrace.so
[ -f "$LIB" ] || { echo "no $LIB: run tools/gpu/pack_devbin.sh here and carry .devbin"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv >"$O/gpu.txt" 2>&1
nproc >>"$O/gpu.txt"
FLOOR_ARGS=()
if [ -f "$PWD/.devbin/lib/libcupti_floor.so" ]; then
  CUPTI=$(python3 -c 'import glob, os, site; print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(os.path.join(d, "nvidia", "**", "libcupti.so.13*"), recursive=True))), ""))')
  FLOOR_ARGS=(--floor "$PWD/.devbin/lib/libcupti_floor.so" --cupti-lib "$CUPTI")
fi
models=(${WP_MODEL:-resnet18})
budget=$(( ${WP_BUDGET:-480} / ${#models[@]} ))
for m in "${models[@]}"; do
  echo "== $m $(date +%T)"
  PYTHONUNBUFFERED=1 python3 tools/bench/whole_process.py bench --lib "$LIB" --out "$O" --model "$m" \
    --procs "${WP_PROCS:-5}" --configs "${WP_CONFIGS:-untraced,default}" --cpus "${WP_CPUS:-0-7}" \
    --budget-s "$budget" "${FLOOR_ARGS[@]}" 2>&1 | tee -a "$O/log.txt"
done
echo "== done $(date +%T)"
