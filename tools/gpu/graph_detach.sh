#!/usr/bin/env bash
# CUDA graphs and CUPTI's detach on the GPU machine: tools/gpu/graph_detach.py's cases, each in
# its own process, with GPUTRACE_CUPTI_DETACH=1 and 0; then JAX and torch.compile (CUDA graphs
# each step) sampled with GPUTRACE_CUPTI_DETACH=0. Uses .devbin (tools/gpu/pack_devbin.sh).
# Output: $OUT/graph_detach.txt
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
. tools/gpu/devbin.sh
R=$OUT/graph_detach.txt
W=$(mktemp -d)
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false XLA_PYTHON_CLIENT_MEM_FRACTION=0.10
echo "# graph_detach $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >"$R"
for det in ${GD_DETACH:-1 0}; do
  for c in ${GD_CASES:-plain in_window before across}; do
    env LD_PRELOAD="$LIB" GPUTRACE_DIR="$W/$c$det" GPUTRACE_CAPTURE=profiler-api GPUTRACE_CUPTI_DETACH=$det \
      GPUTRACE_VERBOSE=1 GPUTRACE_FLUSH_MS=50 timeout 120 python3 tools/gpu/graph_detach.py "$c" >"$W/$c$det.out" 2>"$W/$c$det.err"
    echo "DETACH=$det rc=$? $(grep GRAPH_DETACH "$W/$c$det.out") detaches=$(grep -c 'CUPTI detached' "$W/$c$det.err") attaches=$(grep -c 'CUPTI attached' "$W/$c$det.err")" | tee -a "$R"
  done
done
P=$PWD/sample_apps/corpus
for prog in "jax_step.py --steps 8000" "compile_graphs.py --steps 3000"; do
  set -- $prog
  env LD_PRELOAD="$LIB" GPUTRACE_DIR="$W/s_$1" GPUTRACE_SAMPLE=0.3/0.7 GPUTRACE_CUPTI_DETACH=0 \
    timeout 150 python3 "$P/$1" "${@:2}" >"$W/s_$1.out" 2>"$W/s_$1.err"
  echo "sampled DETACH=0 $1: rc=$? $(grep '^CORPUS' "$W/s_$1.out" | cut -c1-120)" | tee -a "$R"
  grep -m3 -i 'error' "$W/s_$1.err" | cut -c1-200 | tee -a "$R"
done
