#!/bin/sh
# run_case.sh CASE [VAR=value...] APP [ARGS...] — run APP under LD_PRELOAD=libgputrace.so with the fake CUDA
# libraries, then check its .gtrace with interpose_check CASE. Environment: GT_LIB, FAKES, CHECK, WORK.
set -eu
case_name=$1
shift
dir="$WORK/$case_name"
rm -rf "$dir"
mkdir -p "$dir"
if ! env LD_PRELOAD="$GT_LIB" LD_LIBRARY_PATH="$FAKES${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    GPUTRACE_DIR="$dir" GPUTRACE_QUIET=1 "$@" >"$dir/app.out" 2>"$dir/app.err"; then
    echo "app failed: $*"
    cat "$dir/app.out" "$dir/app.err"
    exit 1
fi
exec "$CHECK" "$case_name" "$dir"
