#!/usr/bin/env bash
# GPU evidence for call sites (issue 8). Run from the repo root after tools/gpu/build.sh.
#   - bench_stacks / bench_stacks_py.py: cost of one capture on this machine (no libunwind here:
#     the glibc backtrace() fallback is what users without libunwind get);
#   - train.py --item-every-step recorded twice (default depth 24, and depth 64 to see how deep
#     PyTorch's native stacks are); the traces come back for `stack_dump` / `gputrace report`.
# Output: $OUT/stacks/{facts.txt,bench.txt,item24/*.gtrace,item64/*.gtrace}. About 1-2 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
R="$OUT/stacks"
mkdir -p "$R/item24" "$R/item64"
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
    GPUTRACE_DIR=/tmp GPUTRACE_QUIET=1 LD_PRELOAD="$LIB" "$B" 100000
    GPUTRACE_DIR=/tmp GPUTRACE_QUIET=1 GPUTRACE_STACK_UNWINDER=backtrace LD_PRELOAD="$LIB" "$B" 100000
    GPUTRACE_DIR=/tmp GPUTRACE_QUIET=1 GPUTRACE_STACKS=off LD_PRELOAD="$LIB" "$B" 100000
  else
    echo "bench_stacks not built"
  fi
  GPUTRACE_DIR=/tmp GPUTRACE_QUIET=1 LD_PRELOAD="$LIB" timeout 120 "$PY" tools/bench/bench_stacks_py.py
  rm -f /tmp/gputrace-*.gtrace
} >"$R/bench.txt" 2>&1

for depth in 24 64; do
  GPUTRACE_DIR="$R/item$depth" GPUTRACE_STACK_DEPTH=$depth LD_PRELOAD="$LIB" timeout 150 \
    "$PY" sample_apps/train.py --item-every-step --steps 12 --warmup 2 \
    >"$R/item$depth/stdout.txt" 2>&1
  echo "item$depth: rc=$?" >>"$R/facts.txt"
done
ls -la "$R"/item* >>"$R/facts.txt"
