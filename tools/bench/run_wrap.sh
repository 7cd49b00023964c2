#!/bin/sh
# run_wrap.sh [BUILD_DIR] — what a wrapper adds to one call, on the fake runtime: bench_wrap run
# plainly and under LD_PRELOAD=libgputrace.so (stacks and CUPTI off), best of 5 runs, and the
# instructions per call from callgrind (difference of the two runs divided by the calls).
set -eu
B=${1:-build}
APP="$B/bin/bench_wrap"
LIB="$B/lib/libgputrace.so"
FAKES="$B/tests/fakes/lib"
N=${N:-2000000}
NCG=${NCG:-20000}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH="$FAKES" GPUTRACE_DIR="$T" GPUTRACE_QUIET=1 GPUTRACE_STACKS=off GPUTRACE_CUPTI=0

best() { # best ns/call of 5 runs of: $@
    for i in 1 2 3 4 5; do "$@" | awk '{print $2}'; done | sort -n | head -1
}
instr() { # callgrind instructions of: $@
    valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$@" >/dev/null 2>"$T/cg.err"
    grep -E '^(summary|totals):' "$T/cg.out" | head -1 | awk '{print $2}'
}

printf '| call | plain ns | traced ns | added ns | added instructions |\n|---|---|---|---|---|\n'
for mode in memcpy launch execute; do
    plain=$(best "$APP" $mode $N)
    traced=$(best env LD_PRELOAD="$LIB" "$APP" $mode $N)
    added_instr="n/a"
    if command -v valgrind >/dev/null 2>&1; then
        a0=$(instr "$APP" $mode 1); a1=$(instr "$APP" $mode $NCG)
        b0=$(LD_PRELOAD="$LIB" instr "$APP" $mode 1)
        b1=$(LD_PRELOAD="$LIB" instr "$APP" $mode $NCG)
        added_instr=$(( ( (b1 - b0) - (a1 - a0) ) / (NCG - 1) ))
    fi
    printf '| %s | %s | %s | %.1f | %s |\n' "$mode" "$plain" "$traced" \
        "$(echo "$traced - $plain" | bc -l)" "$added_instr"
done
