#!/usr/bin/env bash
# GPU evidence for call sites (issue 8). Run from the repo root after tools/gpu/build.sh.
#   - bench_stacks / bench_stacks_py.py: cost of one capture on this machine (no libunwind here:
#     the glibc backtrace() fallback is what users without libunwind get);
#   - train.py --item-every-step recorded three times: default (depth 24, gputrace's CFI unwinder
#     since there is no libunwind), and at depth 64 with the CFI unwinder alone (cfi-only) and with
#     glibc backtrace(), so the two can be compared frame for frame on PyTorch's real stacks;
#   - the sync_every_iter sample (a CUDA C program: native call sites).
# The traces come back for `stack_dump` / `gputrace report` here.
# Output: $OUT/stacks/{facts.txt,bench.txt,item24,item64cfi,item64bt,sample}. About 2 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
R="$OUT/stacks"
mkdir -p "$R/item24" "$R/item64cfi" "$R/item64bt" "$R/sample"
LIB="$PWD/build-gpu/lib/libgputrace.so"
[ -f "$LIB" ] || { echo "stacks.sh: $LIB missing: run tools/gpu/build.sh first"; exit 1; }
PY=$(python3 -c 'import sys; print(sys.executable)')
{
  echo "python: $($PY -c 'import sys; print(sys.version.split()[0])')"
  echo "libunwind.so.8: $(ldconfig -p | grep -c 'libunwind.so.8') entries in ldconfig"
  echo "glibc: $(ldd --version | head -1)"
} >"$R/facts.txt" 2>&1

{
  B=build-gpu/bin/bench_stacks
  if [ -x "$B" ]; then
    for u in auto cfi-only backtrace; do
      GPUTRACE_DIR=/tmp GPUTRACE_QUIET=1 GPUTRACE_STACK_UNWINDER=$u LD_PRELOAD="$LIB" "$B" 100000
    done
    GPUTRACE_DIR=/tmp GPUTRACE_QUIET=1 GPUTRACE_STACKS=off LD_PRELOAD="$LIB" "$B" 100000
  else
    echo "bench_stacks not built"
  fi
  GPUTRACE_DIR=/tmp GPUTRACE_QUIET=1 LD_PRELOAD="$LIB" timeout 120 "$PY" tools/bench/bench_stacks_py.py
  rm -f /tmp/gputrace-*.gtrace
} >"$R/bench.txt" 2>&1

run_item() { # folder depth unwinder
  GPUTRACE_DIR="$R/$1" GPUTRACE_STACK_DEPTH=$2 GPUTRACE_STACK_UNWINDER=$3 \
    LD_PRELOAD="$LIB" timeout 120 "$PY" sample_apps/train.py --item-every-step --steps 12 \
    --warmup 2 >"$R/$1/stdout.txt" 2>&1
  echo "$1: rc=$?" >>"$R/facts.txt"
}
run_item item24 24 auto
run_item item64cfi 64 cfi-only
run_item item64bt 64 backtrace
S=build-gpu/sample_apps/sync_every_iter
if [ -x "$S" ]; then
  GPUTRACE_DIR="$R/sample" LD_PRELOAD="$LIB" timeout 60 "$S" >"$R/sample/stdout.txt" 2>&1
  echo "sample: rc=$?" >>"$R/facts.txt"
fi
ls -la "$R"/item* >>"$R/facts.txt"
