#!/usr/bin/env bash
# Issue 30 on the GPU: nvcc's default static cudart against the shared one, program by program.
# Each sample of sample_apps/ built both ways (healthy, sync_every_iter, launch_bound,
# alloc_in_loop, pageable_copies, and tiny_launches 3000 launches 100 a step), traced once with the
# library carried in .devbin (tools/gpu/pack_devbin.sh) and reported there. A static build's calls
# reach no wrapper: CUPTI's API records stand for them (from the start in an executable that
# carries device code and maps no libcudart), so the two builds of one program should give the
# same steps and the same causes. Per run: the program's own CORPUS line, the report's steady step
# and its source, each cause with its saving, the kernels linked, the trace's API records.
#   OUT=<folder> bash tools/gpu/static_twins.sh          (from the repo root on the GPU machine)
# Output: $OUT/static_twins.txt (the summary), $OUT/static_twins_reports.txt (every report).
set -uo pipefail
: "${OUT:?OUT must name the folder for results}"
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tools/gpu/devbin.sh
. tools/gpu/devbin.sh
PY=${PYTHON:-python3}
W=${TWINS_WORK:-/tmp/gputrace-twins}
C=$W # corpus_lib.sh logs the build into $C/build.log
rm -rf "$W" && mkdir -p "$W"
# shellcheck source=tools/gpu/corpus_lib.sh
. tools/gpu/corpus_lib.sh
SAMPLES=(healthy sync_every_iter launch_bound alloc_in_loop pageable_copies tiny_launches)
targets=()
for s in "${SAMPLES[@]}"; do targets+=("$s" "${s}_static"); done
corpus_build "${targets[@]}" || { echo "the samples did not build"; exit 1; }
S=build-gpu/sample_apps
{
  echo "# static_twins $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
  for s in "${SAMPLES[@]}"; do
    args=()
    [ "$s" = tiny_launches ] && args=(3000 100)
    for v in "$s" "${s}_static"; do
      R=$W/$v
      mkdir -p "$R"
      GPUTRACE_DIR="$R" LD_PRELOAD="$LIB" timeout 120 "$S/$v" "${args[@]}" >"$R/out.txt" 2>"$R/err.txt"
      rc=$?
      T=$(ls "$R"/*.gtrace 2>/dev/null | head -1)
      echo "== $v rc=$rc $(grep -o 'step_ms_median=[0-9.]*' "$R/out.txt")"
      [ -n "$T" ] || { echo "   no trace"; continue; }
      { echo "######## $v"; "$GT" report "$T"; } >>"$OUT/static_twins_reports.txt" 2>&1
      "$GT" info "$T" | grep -E '^ +(api|gpu_api|gpu_sync|gpu_kernel) ' | tr -s ' ' | sed 's/^/   info:/'
      "$GT" report --json "$T" 2>/dev/null | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
v = d["verdict"]
print("   step %.3f ms from %s" % (v.get("step_ms") or 0, v.get("step_source")))
for c in v.get("causes", []):
    print("   cause %-16s %-8s %.3f ms" % (c["id"], c["severity"], c["estimated_saving_ms"]))
k = d["processes"][0].get("kernels", {})
linked = sum(k.get(x, 0) for x in ("linked_by_pair", "linked_by_order", "linked_by_time"))
print("   kernels linked %d of %s" % (linked, k.get("count")))'
    done
  done
} 2>&1 | tee "$OUT/static_twins.txt"
