#!/usr/bin/env bash
# GPU evidence for the user's workflow (issue 7) and the sample apps (issues 3.5, 6.5):
# records every sample app (shared and static cudart builds; the conv samples against the system
# cuDNN 9.14 and the pip cuDNN 9.19) and train.py with each flag combination, with
# LD_PRELOAD=build-gpu/lib/libgputrace.so (no analyzer on the GPU machine: it runs here later).
#
# Output (few files): $OUT/workflow/steps.txt   every case's command, stdout (step times) and status
#                     $OUT/workflow/workflow.tar.gz   cases/<case>/*.gtrace, one folder per case
# Run from the repo root after tools/gpu/build.sh. Total time: about 2-3 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
RESULTS="$OUT/workflow"
CASES="$RESULTS/cases"
mkdir -p "$CASES"
LIB="$PWD/build-gpu/lib/libgputrace.so"
SAMPLES="$PWD/build-gpu/sample_apps"
STEPS="$RESULTS/steps.txt"
[ -f "$LIB" ] || { echo "workflow.sh: $LIB missing: run tools/gpu/build.sh first"; exit 1; }
: >"$STEPS"

SYSTEM_CUDNN=/usr/lib/x86_64-linux-gnu
PIP_CUDNN=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null)

{
  echo "# gputrace workflow evidence, $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision",
    torchvision.__version__, "cudnn", torch.backends.cudnn.version())' 2>&1
  echo "system cuDNN: $(ls $SYSTEM_CUDNN/libcudnn.so.9.* 2>/dev/null | head -1)"
  echo "pip cuDNN:    $(ls $PIP_CUDNN/libcudnn.so.9* 2>/dev/null | head -1)"
} >>"$STEPS"

# record CASE [ENV=VALUE...] -- CMD ARGS...   (one folder of .gtrace files per case)
record() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local dir="$CASES/$name"
  mkdir -p "$dir"
  local t0=$(date +%s.%N)
  echo "== $name: ${envs[*]} $*" >>"$STEPS"
  env "${envs[@]}" LD_PRELOAD="$LIB" GPUTRACE_DIR="$dir" timeout 90 "$@" >>"$STEPS" 2>"$dir/stderr.txt"
  local rc=$?
  local t1=$(date +%s.%N)
  tail -5 "$dir/stderr.txt" | sed 's/^/   stderr: /' >>"$STEPS"
  [ -s "$dir/stderr.txt" ] || rm -f "$dir/stderr.txt"
  printf '== %s: rc=%d wall=%.1fs files=%d bytes=%d\n' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" \
    "$(ls "$dir"/*.gtrace 2>/dev/null | wc -l)" "$(du -cb "$dir"/*.gtrace 2>/dev/null | tail -1 | cut -f1)" >>"$STEPS"
  echo "$name rc=$rc"
}

# --- CUDA C samples, shared cudart (wrappers + CUPTI) and one static run each (CUPTI only)
record pageable_copies -- "$SAMPLES/pageable_copies"
record pageable_copies_pinned -- "$SAMPLES/pageable_copies" --pinned
record sync_every_iter -- "$SAMPLES/sync_every_iter" device
record sync_every_iter_item -- "$SAMPLES/sync_every_iter" item
record sync_every_iter_nosync -- "$SAMPLES/sync_every_iter" --no-sync
record launch_bound -- "$SAMPLES/launch_bound"
record launch_bound_batched -- "$SAMPLES/launch_bound" --batched
record alloc_in_loop -- "$SAMPLES/alloc_in_loop"
record alloc_in_loop_reuse -- "$SAMPLES/alloc_in_loop" --reuse
record healthy -- "$SAMPLES/healthy"
for s in pageable_copies sync_every_iter launch_bound alloc_in_loop healthy; do
  record "${s}_static" -- "$SAMPLES/${s}_static"
done

# --- cuDNN samples: Get vs Find, heuristic vs autotune, on both cuDNN versions (for `diff`)
for ver in system pip; do
  dir=$SYSTEM_CUDNN; [ $ver = pip ] && dir=$PIP_CUDNN
  [ -n "$dir" ] || { echo "== no $ver cuDNN found" >>"$STEPS"; continue; }
  for mode in get find; do
    record "conv_legacy_${mode}_$ver" LD_LIBRARY_PATH="$dir" -- "$SAMPLES/conv_legacy" $mode
  done
  for mode in heuristic autotune; do
    record "conv_backend_${mode}_$ver" LD_LIBRARY_PATH="$dir" -- "$SAMPLES/conv_backend" $mode
  done
done
record conv_backend_heuristic_half_pip LD_LIBRARY_PATH="$PIP_CUDNN" -- "$SAMPLES/conv_backend" heuristic half
record conv_backend_autotune_static LD_LIBRARY_PATH="$PIP_CUDNN" -- "$SAMPLES/conv_backend_static" autotune

# --- train.py: each pathology on, then off (few steps each)
if python3 -c 'import torch, torchvision' 2>/dev/null; then
  T="python3 sample_apps/train.py --steps 20 --warmup 5"
  record train_default -- $T
  record train_pinned_nonblocking -- $T --pin-memory --non-blocking
  record train_benchmark -- $T --benchmark
  record train_item_every_step -- $T --item-every-step
  record train_batch2 -- $T --batch-size 2 --steps 40
  record train_amp -- $T --amp
  record train_slow_data_w0 -- $T --slow-data 40 --workers 0
  record train_slow_data_w4 -- $T --slow-data 40 --workers 4
  record train_all_fixes -- $T --pin-memory --non-blocking --benchmark --amp --workers 4
  record train_gputrace_disabled GPUTRACE_DISABLE=1 -- $T
else
  echo "== torch/torchvision not importable: train.py cases skipped" >>"$STEPS"
fi

tar czf "$RESULTS/workflow.tar.gz" -C "$RESULTS" cases && rm -rf "$CASES"
ls -la "$RESULTS" >>"$STEPS"
echo "workflow.sh: results in $RESULTS"
