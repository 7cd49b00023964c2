#!/usr/bin/env bash
# GPU evidence for the CUPTI module (issue 4 items 7-8, issue 10 item 2). Run from the repo root
# after tools/gpu/build.sh; writes few, small files under $OUT/cupti/:
#   counts.md + resnet50_counts/*.gtrace   per-kind counts of 5 ResNet-50 steps, and torch.profiler's
#                                          counts for the same steps (independent check)
#   samples.md + samples/<case>/*.gtrace   per-kind counts of the sample apps: shared cudart, static
#                                          cudart (CUPTI alone, API records auto-switched on), and
#                                          static cudart reached through CUDA_INJECTION64_PATH
#   overhead.md                            the interleaved step-time benchmark (train_overhead.py)
# About 5-6 minutes; the benchmark keeps to the time that is left (whole repeats only).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
R="$OUT/cupti"
mkdir -p "$R"
LIB="$PWD/build-gpu/lib/libgputrace.so"
SAMPLES="$PWD/build-gpu/sample_apps"
COUNT="python3 tools/bench/gtrace_count.py"
[ -f "$LIB" ] || { echo "cupti.sh: $LIB missing: run tools/gpu/build.sh first"; exit 1; }
T0=$(date +%s)

echo "== counts"
timeout 120 python3 tools/bench/train_overhead.py counts --lib "$LIB" --out "$R" >"$R/counts.log" 2>&1
tail -3 "$R/counts.log"

echo "== samples"
S="$R/samples"
mkdir -p "$S"
{
  echo "# Sample apps under gputrace: records per kind"
  echo
  echo "shared = -cudart=shared (wrappers + CUPTI); static = nvcc default (CUPTI only, runtime API"
  echo "records switched on by themselves); inject = static with CUDA_INJECTION64_PATH=libgputrace.so"
  echo "and no LD_PRELOAD."
  echo
} >"$R/samples.md"
run_case() { # NAME VAR=VALUE... -- CMD
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  mkdir -p "$S/$name"
  env GPUTRACE_DIR="$S/$name" GPUTRACE_VERBOSE=1 "${envs[@]}" timeout 60 "$@" >"$S/$name/stdout.txt" 2>"$S/$name/stderr.txt"
  echo "$name rc=$? $(grep -m1 'CUPTI from' "$S/$name/stderr.txt")" | tee -a "$S/rc.txt"
}
for app in pageable_copies sync_every_iter launch_bound healthy conv_backend; do
  [ -x "$SAMPLES/$app" ] && run_case "${app}_shared" LD_PRELOAD="$LIB" -- "$SAMPLES/$app"
  [ -x "$SAMPLES/${app}_static" ] && run_case "${app}_static" LD_PRELOAD="$LIB" -- "$SAMPLES/${app}_static"
done
[ -x "$SAMPLES/healthy_static" ] && run_case healthy_inject CUDA_INJECTION64_PATH="$LIB" -- "$SAMPLES/healthy_static"
[ -x "$SAMPLES/healthy_static" ] && run_case healthy_static_api_off LD_PRELOAD="$LIB" GPUTRACE_API=off -- "$SAMPLES/healthy_static"
for d in "$S"/*/; do
  n=$(basename "$d")
  f=$(ls "$d"*.gtrace 2>/dev/null)
  [ -n "$f" ] && { echo "### $n"; $COUNT $f; echo; } >>"$R/samples.md" 2>&1
done
sed 's/^/    /' "$S/rc.txt" >>"$R/samples.md"

LEFT=$((${CUPTI_BENCH_BUDGET_S:-330} - ($(date +%s) - T0)))
echo "== bench (budget ${LEFT}s)"
[ "$LEFT" -gt 60 ] && timeout $((LEFT + 60)) python3 tools/bench/train_overhead.py bench --lib "$LIB" \
  --out "$R" --repeats 3 --budget-s "$LEFT" >"$R/bench.log" 2>&1
tail -15 "$R/bench.log"
echo "cupti.sh: $(($(date +%s) - T0)) s"
