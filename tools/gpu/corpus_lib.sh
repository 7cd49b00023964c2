# shellcheck shell=bash
# Sourced by tools/gpu/corpus.sh and tools/gpu/corpus_variants.sh: what recording a corpus program
# takes on the GPU machine — the library (and the CUDA C samples) built, the machine's facts, the
# time budget, one run of a program untraced or recorded the way `gputrace record` records
# (LD_PRELOAD=libgputrace.so, GPUTRACE_DIR=a run folder for the whole process tree,
# NVTX_INJECTION64_PATH), with its own timeout so one failure does not stop the rest.
# The caller sets, before calling these: WORK, C (the folder of the case folders, in WORK), SUMMARY
# (the summary file), PY (python), BUDGET_S (seconds from the start, corpus_start).

# corpus_start: a fresh $WORK holding the case folder $C, an empty $SUMMARY; the clock starts.
corpus_start() {
  rm -rf "$WORK" && mkdir -p "$C" && : >"$SUMMARY"
  T_START=$(date +%s)
}

note() { echo "$*" | tee -a "$SUMMARY"; }

budget_left() { echo $((BUDGET_S - ($(date +%s) - T_START))); }

# corpus_build_once [TARGET...]: configure build-gpu and build the targets (default: the library,
# gputrace_preload); the CUDA C samples are configured in only when a target other than the
# library is asked for (nvcc's checks cost seconds).
corpus_build_once() {
  local samples=OFF targets=("$@") t
  ((${#targets[@]})) || targets=(gputrace_preload)
  for t in "${targets[@]}"; do [ "$t" = gputrace_preload ] || samples=ON; done
  export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc} PATH=/usr/local/cuda/bin:$PATH
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTRACE_BUILD_ANALYZER=OFF \
    -DGPUTRACE_BUILD_TESTS=OFF -DGPUTRACE_BUILD_SAMPLES=$samples -DCUDA_HOME=/usr/local/cuda \
    -DCMAKE_CUDA_ARCHITECTURES=90 >>"$C/build.log" 2>&1 &&
    cmake --build build-gpu -j16 --target "${targets[@]}" >>"$C/build.log" 2>&1
}

# corpus_build [TARGET...]: as corpus_build_once; a build-gpu/ configured from another folder
# (carried, or an older checkout) refuses to configure again: start it afresh once. Returns 1
# (the log's end shown) when it still fails.
corpus_build() {
  if ! corpus_build_once "$@" && { rm -rf build-gpu; ! corpus_build_once "$@"; }; then
    tail -40 "$C/build.log"
    return 1
  fi
}

# corpus_facts LIB: what this machine is (GPU, driver, packages), into $C/facts.txt and stdout.
corpus_facts() {
  {
    echo "# gputrace corpus, $(date -u +%FT%TZ) on $(hostname), git $(git rev-parse --short HEAD 2>/dev/null)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    # the installed versions, read without importing (importing them all takes seconds)
    "$PY" - <<'EOF' 2>&1
import sys
from importlib import metadata
print("python", sys.version.split()[0])
for dist in ("torch", "torchvision", "triton", "jax", "jaxlib", "jax-cuda13-plugin", "cupy-cuda13x",
             "numpy", "nvidia-cudnn-cu13"):
    try:
        print(dist, metadata.version(dist))
    except metadata.PackageNotFoundError:  # a missing package is a fact to report, not a failure
        print(dist, "not installed")
EOF
    ls -l "$1" 2>&1
  } >"$C/facts.txt"
  cat "$C/facts.txt"
}

# The GPU machine's shared-host rules, JAX without preallocation, unbuffered Python output.
corpus_env() {
  export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
    NVSHMEM_DISABLE_NVLS=1 XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=0.10
}

# run_one CASE MODE TIMEOUT CMD...   MODE: untraced | traced (with LIB). Runs in $C/CASE, writes
# MODE.out and MODE.err there, and puts the rc line and the CORPUS lines in the summary.
run_one() {
  local name=$1 mode=$2 limit=$3
  shift 3
  local dir=$C/$name left
  left=$(budget_left)
  if [ "$left" -lt 15 ]; then
    note "== $name $mode: skipped, budget spent"
    return
  fi
  [ "$limit" -le "$left" ] || limit=$left
  local envs=()
  if [ "$mode" = traced ]; then
    mkdir -p "$dir/run"
    envs=(LD_PRELOAD="$LIB" GPUTRACE_DIR="$dir/run" NVTX_INJECTION64_PATH="$LIB")
  fi
  local t0 t1 rc
  t0=$(date +%s.%N)
  (cd "$dir" && env "${envs[@]}" timeout -k 10 "$limit" "$@") >"$dir/$mode.out" 2>"$dir/$mode.err"
  rc=$?
  t1=$(date +%s.%N)
  note "$(printf '== %s %s: rc=%d wall=%.1fs (limit %ds)' "$name" "$mode" "$rc" \
    "$(awk "BEGIN{print $t1 - $t0}")" "$limit")"
  grep '^CORPUS ' "$dir/$mode.out" | sed "s/^/   $mode /" | tee -a "$SUMMARY"
  [ "$rc" -eq 0 ] || tail -5 "$dir/$mode.err" | sed 's/^/   stderr: /' | tee -a "$SUMMARY"
  # Keep logs small: the end of a long stderr (compile warnings) is what says what happened.
  if [ "$(stat -c %s "$dir/$mode.err")" -gt 200000 ]; then
    tail -c 200000 "$dir/$mode.err" >"$dir/$mode.err.tail" && mv "$dir/$mode.err.tail" "$dir/$mode.err"
  fi
}

# list_run CASE: the run folder's files, their count and bytes (ls.txt and the summary).
list_run() {
  local dir=$C/$1/run files bytes biggest procs
  [ -d "$dir" ] || return
  ls -l "$dir" >"$C/$1/ls.txt" 2>&1
  files=$(find "$dir" -maxdepth 1 -name '*.gtrace' | wc -l)
  bytes=$(find "$dir" -maxdepth 1 -name '*.gtrace' -printf '%s\n' | awk '{s += $1} END {print s + 0}')
  biggest=$(find "$dir" -maxdepth 1 -name '*.gtrace' -printf '%s %f\n' | sort -n | tail -1)
  echo "gtrace files=$files bytes=$bytes biggest=${biggest:-none}" >>"$C/$1/ls.txt"
  # processes without CUDA activity (ptxas, gcc...): a line each in gputrace-<host>.procs
  procs=$(cat "$dir"/gputrace-*.procs 2>/dev/null | wc -l)
  echo "procs lines=$procs" >>"$C/$1/ls.txt"
  note "   traced files=$files bytes=$bytes biggest: ${biggest:-none}; .procs lines=$procs"
}
