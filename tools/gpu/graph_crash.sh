#!/usr/bin/env bash
# Diagnose a crash of torch.compile with CUDA graphs under GPUTRACE_SAMPLE (CUPTI detached and
# attached again between windows): native backtrace with gdb when the machine has it, Python's
# faulthandler otherwise. Output: $OUT/graph_crash.txt
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
. tools/gpu/devbin.sh
R=$OUT/graph_crash.txt
W=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
echo "gdb: $(command -v gdb || echo none)" >"$R"
CMD=(python3 sample_apps/corpus/compile_graphs.py --steps 3000)
ENVS=(LD_PRELOAD=$LIB GPUTRACE_DIR=$W/t GPUTRACE_SAMPLE=0.3/0.7 GPUTRACE_CUPTI_DETACH=1 GPUTRACE_VERBOSE=1)
if command -v gdb >/dev/null; then
  env "${ENVS[@]}" timeout 200 gdb -q -batch -ex 'set pagination off' -ex 'handle SIGUSR1 SIGUSR2 SIGPIPE nostop noprint' \
    -ex run -ex 'thread apply all bt 12' --args "${CMD[@]}" >"$W/gdb.txt" 2>&1
  echo "gdb rc=$?" >>"$R"
  grep -v '^\[New Thread\|^\[Thread .* exited\|^\[Detaching' "$W/gdb.txt" | tail -150 >>"$R"
else
  env "${ENVS[@]}" timeout 200 "${CMD[@]}" >"$W/out.txt" 2>"$W/err.txt"
  echo "rc=$?" >>"$R"
  grep -v '^gputrace: GPU sampling\|^gputrace: CUPTI stays\|^gputrace: capture paused: CUPTI detaches at' "$W/err.txt" | tail -80 >>"$R"
fi
