#!/usr/bin/env bash
# GPU evidence for issue 21 items 6 and 7: the cudnn-benchmark advice from a run's own numbers, and
# diff comparing like with like. Records, with LD_PRELOAD=build-gpu/lib/libgputrace.so:
#   resnet50_heuristic   train.py --model resnet50 --batch-size 64 (cuDNN heuristics)
#   resnet50_benchmark   the same with --benchmark (autotuning: ~19 s in the first step on an H200)
#   resnet18_b8          train.py --batch-size 8 (fp32) and resnet18_b128_amp_bench
#                        --batch-size 128 --amp (bf16, channels-last) --benchmark: the pair that
#                        read "GPU busy % 5.65 -> 3.23, 0.57x" in diff's whole-run totals
#   conv_backend_autotune / conv_legacy_find (pip cuDNN): the trials' kernels and Find's perf table
# No analyzer runs on the GPU machine; on the analysis machine, after unpacking:
#   gputrace report cases/resnet50_benchmark   -> cudnn-benchmark with gain_ms_per_step,
#       break_even_steps and autotune_cost_ms from this run (no other model's figure), and the
#       cuDNN ops' autotune_timing in --json (source "trial_kernels" when the kernels were joined)
#   gputrace diff cases/resnet50_heuristic cases/resnet50_benchmark -> steady step per step and
#       per sample side by side, B's autotuning step marked 'w' in the aligned steps
#   gputrace diff cases/resnet18_b8 cases/resnet18_b128_amp_bench -> warnings (batch 8 vs 128),
#       steady busy % in points and ms per sample, whole-run totals last
#   gputrace report cases/conv_legacy_find    -> autotune_timing source "find_perf_table"
#
# Output: $OUT/benchmark_advice/steps.txt (commands, program output, status) and
#         $OUT/benchmark_advice/cases.tar.gz (one folder of .gtrace files per case).
# Run from the repo root after tools/gpu/build.sh. Total time: about 2-4 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
RESULTS="$OUT/benchmark_advice"
CASES="$RESULTS/cases"
mkdir -p "$CASES"
LIB="$PWD/build-gpu/lib/libgputrace.so"
SAMPLES="$PWD/build-gpu/sample_apps"
STEPS="$RESULTS/steps.txt"
[ -f "$LIB" ] || { echo "benchmark_advice.sh: $LIB missing: run tools/gpu/build.sh first"; exit 1; }
PIP_CUDNN=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null)
{
  echo "# gputrace benchmark-advice evidence, $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
} >"$STEPS"

# record CASE [ENV=VALUE...] -- CMD ARGS...
record() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local dir="$CASES/$name"
  mkdir -p "$dir"
  echo "== $name: ${envs[*]} $*" >>"$STEPS"
  env "${envs[@]}" LD_PRELOAD="$LIB" NVTX_INJECTION64_PATH="$LIB" GPUTRACE_DIR="$dir" \
    timeout 240 "$@" >>"$STEPS" 2>"$dir/stderr.txt"
  local rc=$?
  tail -5 "$dir/stderr.txt" | sed 's/^/   stderr: /' >>"$STEPS"
  echo "== $name: rc=$rc files=$(ls "$dir"/*.gtrace 2>/dev/null | wc -l)" >>"$STEPS"
  echo "$name rc=$rc"
}

if python3 -c 'import torch, torchvision' 2>/dev/null; then
  T="python3 sample_apps/train.py --steps 30 --warmup 5"
  record resnet50_heuristic -- $T --model resnet50 --batch-size 64
  record resnet50_benchmark -- $T --model resnet50 --batch-size 64 --benchmark
  record resnet18_b8 -- $T --batch-size 8
  record resnet18_b128_amp_bench -- $T --batch-size 128 --amp --benchmark
else
  echo "== torch/torchvision not importable: train.py cases skipped" >>"$STEPS"
fi
if [ -n "$PIP_CUDNN" ]; then
  record conv_backend_autotune LD_LIBRARY_PATH="$PIP_CUDNN" -- "$SAMPLES/conv_backend" autotune
  record conv_backend_heuristic LD_LIBRARY_PATH="$PIP_CUDNN" -- "$SAMPLES/conv_backend" heuristic
  record conv_legacy_find LD_LIBRARY_PATH="$PIP_CUDNN" -- "$SAMPLES/conv_legacy" find
fi

tar czf "$RESULTS/cases.tar.gz" -C "$RESULTS" cases && rm -rf "$CASES"
ls -la "$RESULTS" >>"$STEPS"
echo "benchmark_advice.sh: results in $RESULTS"
