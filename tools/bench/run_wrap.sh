#!/bin/sh
# run_wrap.sh [BUILD_DIR] — what a wrapper adds to one call, on the fake runtime: bench_wrap run
# plainly and under LD_PRELOAD=libgputrace.so, per call type.
#   - ns: CPU time of the calling thread (best of 5 runs of N calls), so that a shared machine's
#     descheduling and the writer thread (reported apart, "writer ns") do not count;
#   - instructions: callgrind, counted only inside bench_loop_* (the calling thread; the writer's
#     CRC and write path is left out), as the difference of a run of N2 and one of N1 calls, which
#     cancels one-time costs (symbol resolution, first-call decoding), traced minus plain.
# Modes: STACKS=off CUPTI=0 (the goal's setting) by default; STACKS=advice (the default of
# GPUTRACE_STACKS) and CUPTI=1 (the fake libcupti: correlation push/pop) are measured the same way.
set -eu
B=${1:-build}
APP="$B/bin/bench_wrap"
LIB="$(cd "$B/lib" && pwd)/libgputrace.so"
FAKES="$B/tests/fakes/lib"
N=${N:-2000000}
N1=${N1:-2000}
N2=${N2:-12000}
STACKS=${STACKS:-off}
CUPTI=${CUPTI:-0}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH="$FAKES" GPUTRACE_DIR="$T" GPUTRACE_QUIET=1 GPUTRACE_STACKS="$STACKS"
export GPUTRACE_CUPTI="$CUPTI"
if [ "$CUPTI" = 1 ]; then export GPUTRACE_CUPTI_LIB="$(cd "$FAKES" && pwd)/libcupti.so.13"; fi

best() { # best thread-CPU and matching writer ns/call of 5 runs of: $@
    for i in 1 2 3 4 5; do
        "$@" | awk '{print $5, $8}'
        rm -f "$T"/*.gtrace
    done | sort -n | head -1
}
instr() { # callgrind instructions in bench_loop_* of: $@
    valgrind --tool=callgrind --fair-sched=yes --toggle-collect='bench_loop_*' --callgrind-out-file="$T/cg.out" \
        "$@" >/dev/null 2>"$T/cg.err"
    rm -f "$T"/*.gtrace
    grep -E '^(summary|totals):' "$T/cg.out" | head -1 | awk '{print $2}'
}

echo "GPUTRACE_STACKS=$STACKS GPUTRACE_CUPTI=$CUPTI, N=$N (ns), N2-N1=$((N2 - N1)) (instructions)"
printf '| call | plain ns | traced ns | added ns | writer ns | added instructions |\n'
printf '|---|---|---|---|---|---|\n'
for mode in ${MODES:-memcpy launch execute}; do
    plain=$(best "$APP" "$mode" "$N" | awk '{print $1}')
    traced=$(best env LD_PRELOAD="$LIB" "$APP" "$mode" "$N")
    added_instr="n/a"
    if command -v valgrind >/dev/null 2>&1; then
        a1=$(instr "$APP" "$mode" "$N1")
        a2=$(instr "$APP" "$mode" "$N2")
        b1=$(LD_PRELOAD="$LIB" instr "$APP" "$mode" "$N1")
        b2=$(LD_PRELOAD="$LIB" instr "$APP" "$mode" "$N2")
        added_instr=$(( ((b2 - b1) - (a2 - a1)) / (N2 - N1) ))
    fi
    set -- $traced
    printf '| %s | %s | %s | %.1f | %s | %s |\n' "$mode" "$plain" "$1" \
        "$(echo "$1 - $plain" | bc -l)" "$2" "$added_instr"
done
