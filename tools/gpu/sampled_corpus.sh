#!/usr/bin/env bash
# Issue 18, GPU sampling on programs gputrace did not write: the corpus programs of issue 21
# (sample_apps/corpus: CuPy, a Triton kernel loop, JAX/XLA, torch.compile with CUDA graphs, a
# DataLoader loop, DDP over gloo), each run long enough for several windows and recorded twice,
# in full and with GPUTRACE_SAMPLE (default 0.5/1.5: CUPTI's records a quarter of the time). The
# traces come back and are compared here, where the analyzer is built (SC_MODES="sampled" records
# only the sampled runs; extra settings for them in SC_SAMPLED_ENV, e.g. GPUTRACE_CUPTI_DETACH=1):
#     tools/gpu/sampled_compare.py <folder of the unpacked archives>
# Also checks, with detach_check.py, that `profiler-api` windows detach CUPTI and attach it again
# inside the application's cudaProfilerStart on the real CUPTI.
# Uses libgputrace.so packed here (tools/gpu/pack_devbin.sh; carry .devbin). About 5 minutes;
# no run starts past SC_BUDGET_S (default 400) s.
# Output: $OUT/sampled_corpus.txt (each run's rc, wall time, CORPUS line, trace bytes),
#         $OUT/sc_<group>.tar.xz (each case's full/ and sampled/ run folders, archived),
#         $OUT/detach_profiler_api.txt, $OUT/detach_signal.txt (the same with the capture signal)
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
. tools/gpu/devbin.sh
W=${SC_WORK:-/tmp/gputrace-sc}
rm -rf "$W" && mkdir -p "$W"
S=$OUT/sampled_corpus.txt
SAMPLE=${SC_SAMPLE:-0.5/1.5}
BUDGET_S=${SC_BUDGET_S:-400}
T0=$(date +%s)
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
note() { echo "$*" | tee -a "$S"; }
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_DISABLE_NVLS=1 XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=0.10
note "# sampled corpus, $(date -u +%FT%TZ), GPUTRACE_SAMPLE=$SAMPLE, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1)"

# record CASE MODE LIMIT CMD...   MODE full | sampled: the run folder $W/CASE/MODE
record() {
  local name=$1 mode=$2 limit=$3 l
  shift 3
  l=$(left)
  if [ "$l" -lt 20 ]; then
    note "== $name $mode: skipped, budget spent"
    return
  fi
  [ "$limit" -le "$l" ] || limit=$l
  local dir=$W/$name/$mode envs=(LD_PRELOAD="$LIB" GPUTRACE_DIR="$W/$name/$mode" NVTX_INJECTION64_PATH="$LIB")
  # shellcheck disable=SC2206 # SC_SAMPLED_ENV: VAR=value words
  [ "$mode" = sampled ] && envs+=(GPUTRACE_SAMPLE="$SAMPLE" GPUTRACE_VERBOSE=1 ${SC_SAMPLED_ENV:-})
  mkdir -p "$dir"
  local t0 rc
  t0=$(date +%s.%N)
  (cd "$dir" && env "${envs[@]}" timeout -k 10 "$limit" "$@") >"$dir/out.txt" 2>"$dir/err.txt"
  rc=$?
  note "$(printf '== %s %s: rc=%d wall=%.1fs' "$name" "$mode" "$rc" "$(awk "BEGIN{print $(date +%s.%N) - $t0}")")"
  grep '^CORPUS ' "$dir/out.txt" | sed "s/^/   /" | tee -a "$S"
  [ "$rc" -eq 0 ] || grep -v '^gputrace: ' "$dir/err.txt" | tail -5 | sed 's/^/   stderr: /' | tee -a "$S"
  [ "$mode" = sampled ] && note "   CUPTI: $(grep -c 'CUPTI attached' "$dir/err.txt") attaches, $(grep -c 'CUPTI detached' "$dir/err.txt") detaches, $(grep -c 'CUPTI stays attached' "$dir/err.txt") detaches cancelled by a window, $(grep -c 'not detached while paused' "$dir/err.txt") processes with several contexts"
  tail -c 100000 "$dir/err.txt" >"$dir/err.tail" && mv "$dir/err.tail" "$dir/err.txt"
  timeout -k 5 60 "$GT" archive "$dir" >"$dir/archive.txt" 2>&1
  note "   traces: $(find "$dir" -name '*.gtrace' -printf '%s\n' | awk '{n++; s += $1} END {printf "%d files, %d bytes", n, s}')"
}

both() {
  local name=$1 limit=$2
  shift 2
  echo "$*" >"$W/$name.cmd"
  local mode
  for mode in ${SC_MODES:-full sampled}; do
    record "$name" "$mode" "$limit" "$@"
  done
}

P=$PWD/sample_apps/corpus
PY=python3
# The detach (GPUTRACE_CUPTI_DETACH=1) with profiler-api and signal windows first: short, and the
# only checks of this call that are no comparison (SC_DETACH_CHECK=0 leaves them out).
detach_checks() {
DC=$OUT/detach_profiler_api.txt
env LD_PRELOAD="$LIB" GPUTRACE_DIR="$W/detach" GPUTRACE_CAPTURE=profiler-api GPUTRACE_CUPTI_DETACH=1 GPUTRACE_VERBOSE=1 GPUTRACE_FLUSH_MS=50 \
  timeout 120 $PY tools/gpu/detach_check.py profiler-api >"$DC" 2>&1
note "== detach_check profiler-api: rc=$? $(grep -c 'CUPTI detached' "$DC") detaches, $(grep -c 'CUPTI attached' "$DC") attaches"
timeout 60 "$GT" info "$W/detach" >>"$DC" 2>&1
timeout 60 "$GT" report "$W/detach" >>"$DC" 2>&1
DS=$OUT/detach_signal.txt
env LD_PRELOAD="$LIB" GPUTRACE_DIR="$W/detach_signal" GPUTRACE_CAPTURE=signal GPUTRACE_CUPTI_DETACH=1 GPUTRACE_VERBOSE=1 \
  GPUTRACE_FLUSH_MS=50 timeout 120 $PY tools/gpu/detach_check.py >"$DS" 2>&1
note "== detach_check signal: rc=$? $(grep -c 'CUPTI detached' "$DS") detaches, $(grep -c 'CUPTI attached' "$DS") attaches"
timeout 60 "$GT" info "$W/detach_signal" >>"$DS" 2>&1
}
[ "${SC_DETACH_CHECK:-1}" = 0 ] || detach_checks

both cupy_loop 60 $PY "$P/cupy_loop.py" --steps 3000
both triton_loop 60 $PY "$P/triton_loop.py" --steps 60000
both jax_step 75 $PY "$P/jax_step.py" --steps 8000
both dataloader_fixed 60 $PY "$P/dataloader_bound.py" --workers 4 --pin-memory --steps 300
both ddp_gloo_slow 90 $PY -m torch.distributed.run --standalone --nproc_per_node=2 \
  "$P/ddp_gloo_slow.py" --slow-rank 1 --slow-ms 15 --steps 250
both compile_graphs 120 $PY "$P/compile_graphs.py" --steps 3000
note "== done, $(($(date +%s) - T0)) s"

# Three archives (at most 16 MiB each come back): the run folders, without the big logs.
pack() {
  local group=$1
  shift
  local have=()
  for c in "$@"; do
    [ -d "$W/$c" ] && have+=("$c")
    [ -f "$W/$c.cmd" ] && have+=("$c.cmd")
  done
  [ ${#have[@]} -gt 0 ] || return
  tar -C "$W" -cf - "${have[@]}" | xz -T8 -6 >"$OUT/sc_$group.tar.xz"
  note "sc_$group.tar.xz: $(stat -c %s "$OUT/sc_$group.tar.xz") bytes"
}
pack a cupy_loop triton_loop jax_step
pack b dataloader_fixed ddp_gloo_slow
pack c compile_graphs detach detach_signal
