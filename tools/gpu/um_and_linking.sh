#!/usr/bin/env bash
# Issue 30 on the GPU: unified memory and kernels from calls no wrapper sees, on the corpus's
# programs (tools/gpu/corpus_variants.sh records them for the test corpus; this script looks at
# what the recorder of issue 30 does with them):
#   - sample_apps/managed_gemv.cu (cudaMallocManaged + cublasSgemv from 4 OpenMP threads + a
#     kernel of its own, host writes and reads each round), built here with nvcc's default static
#     cudart (the issue's case: no wrapper sees its runtime) and with the shared one, plain, with
#     --prefetch and --advise; the static build also with GPUTRACE_UM=on (the counters from the
#     start: does asking at the first managed allocation, the default, lose anything?), with
#     GPUTRACE_UM=off (what the counters cost), with a callback pair on every launch
#     (GPUTRACE_CUPTI_LINK=callbacks, the reference for the links), and untraced;
#   - PyTorch: ResNet-18 training at batch 32 and ResNet-50 batch-1 inference (cuDNN's legacy
#     batch norm: sample_apps/corpus/resnet_loop.py);
#   - CuPy: matmuls and element-wise work (sample_apps/corpus/cupy_matmul.py).
# Builds libgputrace.so into build-gpu/ (tools/gpu/corpus_lib.sh) unless UM_LIB names one (the
# carried .devbin/lib/libgputrace.so), and the sample with nvcc. The analyzer needs protobuf-c,
# which the GPU machine lacks: when .devbin was carried (tools/gpu/pack_devbin.sh), each trace is
# reported there and the summary shows per trace the kernels linked to a call vs "from calls no
# wrapper sees", the unified-memory section, the info lines and the advice ids; without it the
# traces come back for the analyzer here.
#
# Run from the repo root on the GPU machine:   OUT=<folder> bash tools/gpu/um_and_linking.sh
# Output: $OUT/um_linking.txt          the summary (facts, each run's rc, wall time, own CORPUS
#                                      line, then per trace: links, unified memory, info, advice)
#         $OUT/um_linking_reports.txt  every case's `gputrace report` in full (with .devbin)
#         $OUT/um_linking.tar.xz       um_linking/{build.log,facts.txt,<case>/{cmd.txt,traced.out,
#                                      traced.err,ls.txt,run/*.gtrace,report.txt,info.txt}} (at most
#                                      15 MB: past that, without the traces over 3 MB, named in the
#                                      summary)
# Environment: UM_BUDGET_S (default 480): no run starts past that many seconds from the start,
# build included; UM_WORK: the work folder (default /tmp/gputrace-um); UM_LIB: a libgputrace.so to
# use instead of building one; UM_CASES: an extended regex, only the cases whose whole name it
# matches run (default: all); PYTHON (default python3). Time: about 5 minutes for all.
set -uo pipefail
: "${OUT:?OUT must name the folder for results}"
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
cd "$(dirname "$0")/../.." || exit 1
REPO=$PWD
PY=${PYTHON:-python3}
WORK=${UM_WORK:-/tmp/gputrace-um} C=${UM_WORK:-/tmp/gputrace-um}/um_linking
SUMMARY=${UM_WORK:-/tmp/gputrace-um}/um_linking.txt
BUDGET_S=${UM_BUDGET_S:-480}
# shellcheck source=tools/gpu/corpus_lib.sh
. "$REPO/tools/gpu/corpus_lib.sh"
corpus_start

# --- libgputrace.so and the sample, with each build of its cudart
if [ -n "${UM_LIB:-}" ]; then
  LIB=$(readlink -f "$UM_LIB")
else
  corpus_build gputrace_preload || note "um_and_linking.sh: the library did not build (build.log in the archive)"
  LIB=$REPO/build-gpu/lib/libgputrace.so
fi
[ -f "$LIB" ] || { note "um_and_linking.sh: no library at $LIB"; cp "$SUMMARY" "$OUT/"; exit 1; }
export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc} PATH=/usr/local/cuda/bin:$PATH
B=$C/bin
mkdir -p "$B"
for rt in static shared; do
  nvcc -O2 -arch=sm_90 -cudart=$rt -Xcompiler -fopenmp -Isample_apps sample_apps/managed_gemv.cu \
    -lcublas -o "$B/managed_gemv_$rt" >>"$C/build.log" 2>&1 ||
    note "managed_gemv ($rt cudart) did not build (build.log in the archive)"
done
note "build done after $(($(date +%s) - T_START)) s; library $LIB"

# The analyzer, when carried (tools/gpu/pack_devbin.sh): reports here.
G=$REPO/.devbin/bin/gputrace
if [ -x "$G" ] && LD_LIBRARY_PATH=$REPO/.devbin/lib "$G" --help >/dev/null 2>&1; then
  note "analyzer: $G"
else
  note "analyzer: none carried (.devbin, or it does not run here): traces recorded only"
  G=
fi
gputrace() { LD_LIBRARY_PATH=$REPO/.devbin/lib timeout -k 5 60 "$G" "$@"; }
corpus_facts "$LIB" | tee -a "$SUMMARY"
corpus_env

# um_case CASE TIMEOUT [VAR=value...] -- CMD...: recorded with GPUTRACE_VERBOSE=1 and the VARs
# (untraced with untraced=1), then, with the analyzer, reported: the summary gets its links, its
# unified-memory section, the lines of `gputrace info` that say what was recorded, its advice ids.
um_case() {
  local name=$1 limit=$2 mode=traced
  shift 2
  [[ "$name" =~ ^(${UM_CASES:-.*})$ ]] || return 0
  local envs=(GPUTRACE_VERBOSE=1)
  while [ "$1" != "--" ]; do
    if [ "$1" = untraced=1 ]; then mode=untraced; else envs+=("$1"); fi
    shift
  done
  shift
  local d=$C/$name
  mkdir -p "$d"
  echo "${envs[*]} $*" >"$d/cmd.txt"
  [ -x "$1" ] || [[ "$1" != /* ]] || { note "== $name: skipped, $1 was not built"; return; }
  run_one "$name" "$mode" "$limit" env "${envs[@]}" "$@"
  [ -f "$d/$mode.err" ] || return # skipped: budget spent
  # what the recorder said about the static runtime and the unified-memory counters
  grep -hE 'static cudart|unified-memory|refused' "$d/$mode.err" | sort | uniq -c | head -5 |
    sed 's/^ */   recorder: /' | tee -a "$SUMMARY"
  [ "$mode" = traced ] || return
  list_run "$name"
  [ -n "$G" ] || return
  gputrace report "$d/run" >"$d/report.txt" 2>&1
  gputrace info "$d/run" >"$d/info.txt" 2>&1
  # the links line on one line (the report wraps it: "N told apart by stream" may sit on the
  # second), then the kernel most often unlinked
  awk '/^  links / { on = 1; l = $0; next }
       on && /^            / && !/^ *most often/ { l = l " " $0; next }
       on { print l; on = 0 }
       /^ *most often/ { print }
       END { if (on) print l }' "$d/report.txt" | tr -s ' ' | sed 's/^ */   /' | tee -a "$SUMMARY"
  sed -n '/^== unified memory ==/,/^$/p' "$d/report.txt" | sed -n '2,9p' | sed 's/^ */   um: /' |
    tee -a "$SUMMARY"
  grep -E '^\s+(unified memory|note|gpu_um|api_launch|gpu_kernel) ' "$d/info.txt" | sort | uniq -c |
    sed 's/^ */   info: /' | tee -a "$SUMMARY"
  grep -oE '^  \[(critical|warning|info)\] [a-z-]+' "$d/report.txt" | sed 's/^ */   advice: /' |
    tee -a "$SUMMARY"
  { echo "######## $name: $(cat "$d/cmd.txt")"; cat "$d/report.txt"; } >>"$WORK/reports.txt"
}

M=(4 2048 30)
P=$REPO/sample_apps/corpus
um_case managed_static_untraced 60 untraced=1 -- "$B/managed_gemv_static" "${M[@]}"
um_case managed_static 90 -- "$B/managed_gemv_static" "${M[@]}"
um_case managed_static_prefetch 90 -- "$B/managed_gemv_static" "${M[@]}" --prefetch
um_case managed_static_advise 90 -- "$B/managed_gemv_static" "${M[@]}" --advise
um_case managed_static_um_on 90 GPUTRACE_UM=on -- "$B/managed_gemv_static" "${M[@]}"
um_case managed_static_um_off 90 GPUTRACE_UM=off -- "$B/managed_gemv_static" "${M[@]}"
um_case managed_static_callbacks 90 GPUTRACE_CUPTI_LINK=callbacks -- "$B/managed_gemv_static" "${M[@]}"
um_case managed_shared 90 -- "$B/managed_gemv_shared" "${M[@]}"
um_case managed_shared_prefetch 90 -- "$B/managed_gemv_shared" "${M[@]}" --prefetch
um_case resnet_train 150 -- "$PY" "$P/resnet_loop.py" --mode train --model resnet18 --batch-size 32 --steps 40
um_case resnet_infer_b1 150 -- "$PY" "$P/resnet_loop.py" --mode infer --model resnet50 --batch-size 1 --steps 300
um_case cupy_matmul 120 -- "$PY" "$P/cupy_matmul.py" --n 512
note "== runs done after $(($(date +%s) - T_START)) s"

# --- the evidence: the summary, the reports, everything in one archive (traces included)
MAX_BYTES=15000000
tar -C "$WORK" -cJf "$OUT/um_linking.tar.xz" --exclude=um_linking/bin um_linking
if [ "$(stat -c %s "$OUT/um_linking.tar.xz")" -gt $MAX_BYTES ]; then
  (cd "$WORK" && find um_linking -name '*.gtrace' -size +3000000c) >"$WORK/left_out.txt"
  tar -C "$WORK" -cJf "$OUT/um_linking.tar.xz" --exclude=um_linking/bin -X "$WORK/left_out.txt" um_linking
  note "archive: over 15 MB, packed again without these traces: $(tr '\n' ' ' <"$WORK/left_out.txt")"
fi
note "archive: um_linking.tar.xz, $(stat -c %s "$OUT/um_linking.tar.xz") bytes"
[ -f "$WORK/reports.txt" ] && cp "$WORK/reports.txt" "$OUT/um_linking_reports.txt"
note "== all done after $(($(date +%s) - T_START)) s"
cp "$SUMMARY" "$OUT/um_linking.txt"
ls -la "$OUT"
