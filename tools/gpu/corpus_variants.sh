#!/usr/bin/env bash
# GPU corpus variants (issues 29 and 30): the programs of sample_apps/corpus/ and the CUDA C corpus
# samples (sample_apps/{tiny_launches,multistream_copies,gemm_share,managed_gemv}.cu), each in
# several variants, recorded on the GPU machine so that every statement of the two issues is
# exercised on a real trace. Each case runs once, recorded; the CORPUS line the program prints
# during that run is the clock the report is checked against. A few cheap cases also run untraced
# first (BASELINES: the tracing overhead, one per program family).
#
# Run from the repo root on the GPU machine:
#   OUT=<folder> bash tools/gpu/corpus_variants.sh GROUP|CASE[,CASE...]...
#   bash tools/gpu/corpus_variants.sh list      the cases, their groups, expected times, commands
# Groups: g29 (issue 29), g30 (issue 30), all, selftest (no GPU: the script's own test, run by
# tests/corpus). Within a group the cases run in order of importance: when the budget runs out the
# rest are skipped and the summary names them, with the command that runs them.
# Each call builds libgputrace.so into build-gpu/ (about a minute) unless CORPUS_LIB names one (the
# carried .devbin/lib/libgputrace.so), and the CUDA C samples its cases need.
# Environment: CORPUS_BUDGET_S (default 480): no run starts, and a run's timeout is cut, past that
# many seconds from the script's start, build included; archiving and packing follow, all done by
# CORPUS_DEADLINE_S (default 560). CORPUS_BASELINE=0: no untraced baselines. CORPUS_WORK: the work
# folder (default /tmp/gputrace-variants). When the analyzer travels in .devbin
# (tools/gpu/pack_devbin.sh, carried), each run folder gets its symbol archive (`gputrace archive`:
# native frames named here, where the libraries are — cudnn_frontend's autotuner, XLA's).
#
# Output in $OUT (at most 8 files of 16 MB each come back from the GPU machine):
#   corpus_<label>.txt      the summary: facts, each run's command, rc, wall time, CORPUS lines,
#                           trace files and bytes, what was skipped or left out, the archives
#   corpus_<label>_<k>.tar  bundles of <case>.tar.xz (at most 15 MB each), each in the layout of
#                           tests/data/corpus: <case>/{run/,cmd.txt,traced.out,traced.err,ls.txt}
#                           (and untraced.* for baselines); tools/gpu/import_corpus.py takes them in.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
REPO=$PWD
PY=${PYTHON:-python3}
P=$REPO/sample_apps/corpus
S=$REPO/build-gpu/sample_apps
TORCHRUN=("$PY" -m torch.distributed.run --standalone)

# ------------------------------------------------------------------------------------ the cases
CASES=()
declare -A CASE_GROUP CASE_EST CASE_LIMIT CASE_CMD
# add_case NAME GROUP EST_S LIMIT_S CMD...: EST_S the expected wall time recorded (for planning),
# LIMIT_S the run's timeout.
add_case() {
  local name=$1
  CASES+=("$name")
  CASE_GROUP[$name]=$2 CASE_EST[$name]=$3 CASE_LIMIT[$name]=$4
  shift 4
  CASE_CMD[$name]=$(printf '%q ' "$@")
}
BASELINES=" mscopy_pipelined gemm_share_small tiny_cuda_1 tiny_cupy_1 managed_gemv cupy_matmul_small st_ok "

# straggler MODEL WORLD WHERE KIND RANK SYNC: one run of the straggler matrix (issue 30), 20 ms a
# step. A fractional design: every level of every factor in at least two runs, each `where` with
# both models, both kinds, both syncs and both world sizes.
straggler() {
  local name="straggler_$1$2_$3_$4_r$5"
  [ "$6" = 1 ] && name+=_sync
  add_case "$name" g30 "$([ "$1$2" = conv4 ] && echo 30 || echo 18)" 150 \
    "${TORCHRUN[@]}" --nproc_per_node="$2" "$P/ddp_straggler.py" --model "$1" --delay-where "$3" \
    --delay-kind "$4" --delay-rank "$5" --delay-ms 20 --sync "$6" --steps 20 --warmup 5
}

# Issue 29, the essential cases first.
add_case mscopy_pipelined g29 4 60 "$S/multistream_copies" 4 16 0.3 1000 4000
add_case mscopy_drain g29 5 60 "$S/multistream_copies" 4 16 0.3 1000 4000 --drain
add_case gemm_share_small g29 4 60 "$S/gemm_share" 256 200 300
add_case gemm_share_large g29 5 60 "$S/gemm_share" 4096 20 200
add_case cpu_copy_pageable g29 15 90 "$PY" "$P/cpu_copies.py" --mode pageable
add_case cpu_copy_pinned g29 12 90 "$PY" "$P/cpu_copies.py" --mode pinned
add_case bench_resnet_short g29 25 150 "$PY" "$P/cudnn_benchmark.py" --model resnet18 \
  --benchmark 1 --steps 20 --image-size 112
add_case bench_resnet_off g29 12 90 "$PY" "$P/cudnn_benchmark.py" --model resnet18 \
  --benchmark 0 --steps 20 --image-size 112
add_case bench_shapes g29 40 180 "$PY" "$P/cudnn_benchmark.py" --model small --benchmark 1 \
  --shapes 8 --new-every 4 --steps 40
add_case bench_shapes_bucketed g29 20 120 "$PY" "$P/cudnn_benchmark.py" --model small \
  --benchmark 1 --shapes 8 --new-every 4 --steps 40 --bucket 32
add_case jax_conv g29 25 120 "$PY" "$P/jax_conv.py"
add_case jax_conv_noautotune g29 20 120 env XLA_FLAGS=--xla_gpu_autotune_level=0 \
  "$PY" "$P/jax_conv.py"
add_case ddp_conv_nobench g29 25 120 "${TORCHRUN[@]}" --nproc_per_node=2 "$P/ddp_straggler.py" \
  --model conv --delay-ms 0 --sync 0 --steps 20 --warmup 5
add_case resnet_train g29 15 90 "$PY" "$P/resnet_loop.py" --mode train --model resnet18 \
  --batch-size 32 --steps 40
add_case resnet_infer_b1 g29 15 90 "$PY" "$P/resnet_loop.py" --mode infer --model resnet50 \
  --batch-size 1 --steps 300
add_case host_bound_busy g29 8 60 "$PY" "$P/host_bound.py" --kind busy
add_case host_bound_sync g29 8 60 "$PY" "$P/host_bound.py" --kind busy --sync 1
# Issue 29, second variants.
add_case gemm_share_tf32 g29 4 60 "$S/gemm_share" 4096 20 200 --tf32
add_case mscopy_pipelined2 g29 4 60 "$S/multistream_copies" 2 16 0.3 1000 4000
add_case cpu_copy_nopeak g29 15 90 "$PY" "$P/cpu_copies.py" --mode pageable --no-measure-peak
add_case bench_shapes_off g29 12 90 "$PY" "$P/cudnn_benchmark.py" --model small --benchmark 0 \
  --shapes 8 --new-every 4 --steps 40
add_case bench_small_short g29 15 120 "$PY" "$P/cudnn_benchmark.py" --model small --benchmark 1 \
  --steps 20 --image-size 128
add_case resnet_train_amp g29 15 90 "$PY" "$P/resnet_loop.py" --mode train --model resnet18 \
  --batch-size 32 --steps 40 --amp
add_case host_bound_sleep g29 8 60 "$PY" "$P/host_bound.py" --kind sleep
add_case jax_conv_shapes g29 30 150 "$PY" "$P/jax_conv.py" --batch-sizes 32,48,64 --shape-every 10

# Issue 30: the cheap cases first, then compilation and the straggler matrix.
add_case tiny_triton_1 g30 12 90 "$PY" "$P/tiny_launches.py" --path triton --per-step 1
add_case tiny_cupy_1 g30 6 60 "$PY" "$P/tiny_launches.py" --path cupy --per-step 1
add_case tiny_cuda_1 g30 2 30 "$S/tiny_launches" 3000 1
add_case tiny_triton_100 g30 12 90 "$PY" "$P/tiny_launches.py" --path triton --per-step 100
add_case tiny_cupy_100 g30 6 60 "$PY" "$P/tiny_launches.py" --path cupy --per-step 100
add_case tiny_cuda_100 g30 2 30 "$S/tiny_launches" 3000 100
add_case tiny_cuda_static_1 g30 2 30 "$S/tiny_launches_static" 3000 1
add_case tiny_cuda_static_100 g30 2 30 "$S/tiny_launches_static" 3000 100
add_case managed_gemv g30 4 60 "$S/managed_gemv" 4 2048 30
add_case managed_gemv_prefetch g30 4 60 "$S/managed_gemv" 4 2048 30 --prefetch
add_case managed_gemv_advise g30 4 60 "$S/managed_gemv" 4 2048 30 --advise
add_case cupy_matmul_large g30 8 60 "$PY" "$P/cupy_matmul.py" --n 4096
add_case cupy_matmul_small g30 6 60 "$PY" "$P/cupy_matmul.py" --n 512
add_case cupy_matmul_tf32 g30 8 60 env CUPY_TF32=1 "$PY" "$P/cupy_matmul.py" --n 4096
add_case compile_ro g30 30 150 "$PY" "$P/compile_loop.py" --mode reduce-overhead
add_case compile_recompile g30 45 180 "$PY" "$P/compile_loop.py" --mode default --dynamic false \
  --batch-sizes 256,320,384,448 --shape-every 10 --steps 80
straggler conv 2 forward sleep 1 0 # the run issue 30 reports: no straggler named
straggler mlp 2 forward busy 1 1   # the run the corpus already passed (ddp_gloo_slow's style)
straggler mlp 4 forward busy 0 0
straggler conv 2 backward sleep 0 1
straggler conv 4 backward busy 1 0
straggler mlp 4 backward sleep 0 0
straggler mlp 2 data sleep 0 1
straggler mlp 2 data busy 1 0
straggler conv 4 data sleep 1 1
add_case compile_default g30 25 150 "$PY" "$P/compile_loop.py" --mode default
add_case compile_dynamic g30 30 150 "$PY" "$P/compile_loop.py" --mode default --dynamic true \
  --batch-sizes 256,320,384,448 --shape-every 10 --steps 80

# The script's own test (tests/corpus): a run that passes, one that fails, one that times out,
# and, with CORPUS_SELFTEST_APP, a program on the fake CUDA libraries that leaves a trace.
add_case st_ok selftest 1 20 "$PY" -c 'print("CORPUS name=st_ok steps=2 warmup_steps=1 step_ms_median=1.000 step_ms_wall=1.000 sync=step startup_s=0.01")'
add_case st_fail selftest 1 20 sh -c 'echo failing on purpose >&2; exit 3'
add_case st_timeout selftest 2 2 sleep 30
[ -n "${CORPUS_SELFTEST_APP:-}" ] && add_case st_app selftest 1 20 sh -c \
  '"$0" exit 0 && echo "CORPUS name=st_app steps=0 warmup_steps=0 step_ms_median=nan step_ms_wall=nan sync=end startup_s=nan"' \
  "$CORPUS_SELFTEST_APP"

# ------------------------------------------------------------------------------ the selection
usage() {
  echo "usage: OUT=<folder> $0 GROUP|CASE[,CASE...]...   (groups: g29 g30 all selftest; '$0 list')" >&2
  exit 2
}
if [ "${1:-}" = list ]; then
  declare -A total
  for name in "${CASES[@]}"; do
    g=${CASE_GROUP[$name]}
    total[$g]=$((${total[$g]:-0} + CASE_EST[$name]))
    printf '%-8s %-34s ~%3ss (limit %3ss)  %s\n' "$g" "$name" "${CASE_EST[$name]}" \
      "${CASE_LIMIT[$name]}" "${CASE_CMD[$name]}"
  done
  for g in "${!total[@]}"; do echo "group $g: ~${total[$g]} s of runs, plus the build (~60 s)"; done
  exit 0
fi
(($#)) || usage
SELECTED=()
for arg in "$@"; do
  for token in ${arg//,/ }; do
    found=0
    for name in "${CASES[@]}"; do
      if [ "$token" = all ] && [ "${CASE_GROUP[$name]}" != selftest ] ||
        [ "$token" = "${CASE_GROUP[$name]}" ] || [ "$token" = "$name" ]; then
        [[ " ${SELECTED[*]} " == *" $name "* ]] || SELECTED+=("$name")
        found=1
      fi
    done
    ((found)) || { echo "corpus_variants.sh: no case or group '$token'" >&2; usage; }
  done
done
ARGS="$*"
LABEL=cases
if [ $# = 1 ] && [[ " g29 g30 all selftest " == *" $1 "* ]]; then LABEL=$1; fi
: "${OUT:?OUT must name the folder for results}"
mkdir -p "$OUT"

WORK=${CORPUS_WORK:-/tmp/gputrace-variants} C=${CORPUS_WORK:-/tmp/gputrace-variants}/cases
SUMMARY=${CORPUS_WORK:-/tmp/gputrace-variants}/summary.txt
BUDGET_S=${CORPUS_BUDGET_S:-480} DEADLINE_S=${CORPUS_DEADLINE_S:-560}
# shellcheck source=tools/gpu/corpus_lib.sh
. "$REPO/tools/gpu/corpus_lib.sh"
corpus_start

# ---------------------------------------------------------------------------------- the build
TARGETS=()
for name in "${SELECTED[@]}"; do
  eval "set -- ${CASE_CMD[$name]}"
  for arg in "$@"; do
    if [[ "$arg" == "$S/"* ]] && [[ " ${TARGETS[*]} " != *" ${arg#"$S/"} "* ]]; then
      TARGETS+=("${arg#"$S/"}")
    fi
  done
done
note "corpus_variants.sh $ARGS: ${#SELECTED[@]} cases, ~$(for n in "${SELECTED[@]}"; do echo "${CASE_EST[$n]}"; done | awk '{s += $1} END {print s}') s of runs"
BUILD_OK=1
if [ -n "${CORPUS_LIB:-}" ]; then
  LIB=$(readlink -f "$CORPUS_LIB")
  if ((${#TARGETS[@]})); then corpus_build "${TARGETS[@]}" || BUILD_OK=0; fi
else
  corpus_build gputrace_preload "${TARGETS[@]}" || BUILD_OK=0
  LIB=$REPO/build-gpu/lib/libgputrace.so
fi
((BUILD_OK)) || note "corpus_variants.sh: the build failed (the end of build.log is in the summary)"
note "build done after $(($(date +%s) - T_START)) s; targets: gputrace_preload ${TARGETS[*]}"
corpus_facts "$LIB" >>"$SUMMARY"
corpus_env

# -------------------------------------------------------------------------------------- the runs
SKIPPED=()
for name in "${SELECTED[@]}"; do
  if [ ! -f "$LIB" ] || [ "$(budget_left)" -lt 20 ]; then
    SKIPPED+=("$name")
    continue
  fi
  eval "set -- ${CASE_CMD[$name]}"
  if [[ "$1" == "$S/"* ]] && [ ! -x "$1" ]; then
    note "== $name: skipped, $1 was not built"
    SKIPPED+=("$name")
    continue
  fi
  mkdir -p "$C/$name"
  echo "$*" >"$C/$name/cmd.txt"
  note "== $name: ${CASE_CMD[$name]}($(date +%T), $(budget_left) s of budget left)"
  if [ "${CORPUS_BASELINE:-1}" != 0 ] && [[ "$BASELINES" == *" $name "* ]]; then
    run_one "$name" untraced "${CASE_LIMIT[$name]}" "$@"
  fi
  run_one "$name" traced "${CASE_LIMIT[$name]}" "$@"
  list_run "$name"
done
note "== runs done $(date +%T), $(($(date +%s) - T_START)) s in all"
if ((${#SKIPPED[@]})); then
  note "skipped (no library or budget spent): ${SKIPPED[*]}"
  note "to run them: OUT=<folder> bash tools/gpu/corpus_variants.sh $(
    IFS=,
    echo "${SKIPPED[*]}"
  )"
fi

deadline_left() { echo $((DEADLINE_S - ($(date +%s) - T_START))); }
RAN=()
for name in "${SELECTED[@]}"; do [ -d "$C/$name" ] && RAN+=("$name"); done

# ---------------------------------------------------- symbol archives, with the analyzer carried
G=$REPO/.devbin/bin/gputrace
if [ -x "$G" ] && ((${#RAN[@]})) && LD_LIBRARY_PATH=$REPO/.devbin/lib "$G" archive --help >/dev/null 2>&1; then
  cap=$(($(deadline_left) - 40))
  ((cap > 90)) && cap=90
  if ((cap > 10)); then
    note "symbol archives (gputrace archive), at most $cap s"
    printf '%s\n' "${RAN[@]}" | LD_LIBRARY_PATH=$REPO/.devbin/lib timeout -k 5 "$cap" \
      xargs -P 8 -I{} sh -c '"$1" archive "$2/{}/run" >"$2/{}/archive.txt" 2>&1' _ "$G" "$C"
    note "   archived: $(find "$C" -name gputrace-symbols.txt | wc -l) of ${#RAN[@]} run folders"
  else
    note "symbol archives: skipped, the deadline is near"
  fi
else
  note "symbol archives: no analyzer carried (.devbin): native frames are named where analyzed"
fi

# -------------------------------------------------------------------------------------- packing
# One <case>.tar.xz per case (the layout of tests/data/corpus), made in parallel; a case whose
# archive passes 15 MB is packed again without its traces over 3 MB (named in left_out.txt).
MAX_BYTES=15000000
PACK=$WORK/pack
mkdir -p "$PACK"
pack_case() { # CASE [EXCLUDE_OVER_BYTES]
  local exclude=()
  if [ -n "${2:-}" ]; then
    find "$C/$1/run" -name '*.gtrace' -size +"$2"c -printf '%s %f\n' >"$C/$1/left_out.txt"
    awk -v c="$1" '{print c "/run/" $2}' "$C/$1/left_out.txt" >"$C/$1/exclude.txt"
    exclude=(--exclude-from="$C/$1/exclude.txt")
  fi
  tar -C "$C" -cf - "${exclude[@]}" "$1" | xz -6 -T1 >"$PACK/$1.tar.xz"
}
export -f pack_case
export C PACK
((${#RAN[@]})) && printf '%s\n' "${RAN[@]}" | xargs -P 8 -I{} bash -c 'pack_case "$1"' _ {}
for name in "${RAN[@]}"; do
  if [ "$(stat -c %s "$PACK/$name.tar.xz")" -gt $MAX_BYTES ]; then
    pack_case "$name" 3000000
    note "   $name: packed without its traces over 3 MB: $(awk '{print $2 " (" $1 " bytes)"}' "$C/$name/left_out.txt" | tr '\n' ' ')"
  fi
done

# Bundles of at most 15 MB, largest archives first into the first bundle they fit (7 bundles
# and the summary: the 8 files that come back).
BUNDLE_BYTES=()
BUNDLE_FILES=()
while read -r bytes name; do
  placed=0
  for k in "${!BUNDLE_BYTES[@]}"; do
    if ((BUNDLE_BYTES[k] + bytes <= MAX_BYTES)); then
      BUNDLE_BYTES[k]=$((BUNDLE_BYTES[k] + bytes))
      BUNDLE_FILES[k]+=" $name"
      placed=1
      break
    fi
  done
  if ((!placed)); then
    if ((${#BUNDLE_BYTES[@]} >= 7)) || ((bytes > MAX_BYTES)); then
      note "   left out (no room in 7 bundles of 15 MB): $name ($bytes bytes)"
      continue
    fi
    BUNDLE_BYTES+=("$bytes")
    BUNDLE_FILES+=(" $name")
  fi
done < <(cd "$PACK" && find . -maxdepth 1 -name '*.tar.xz' -printf '%s %f\n' | sort -rn)
rm -f "$OUT/corpus_${LABEL}"_*.tar
for k in "${!BUNDLE_FILES[@]}"; do
  # shellcheck disable=SC2086 # the bundle's file names, split on purpose
  tar -C "$PACK" -cf "$OUT/corpus_${LABEL}_$((k + 1)).tar" ${BUNDLE_FILES[k]}
  note "bundle corpus_${LABEL}_$((k + 1)).tar: $(stat -c %s "$OUT/corpus_${LABEL}_$((k + 1)).tar") bytes:${BUNDLE_FILES[k]}"
done
{
  echo
  echo "---- build.log (end)"
  tail -20 "$C/build.log" 2>/dev/null
} >>"$SUMMARY"
note "== all done after $(($(date +%s) - T_START)) s"
cp "$SUMMARY" "$OUT/corpus_${LABEL}.txt"
