#!/bin/sh
# memory_growth.sh [BUILD_DIR] [STEPS...] — how the analyzer's memory grows with the trace (issue 33
# item 0): for each STEPS (default 2000 20000 60000) a launch loop recorded on the test fakes
# (STEPS steps of 30 launches and a device sync, ~6.8 KB of trace a step), then the peak resident
# memory (/usr/bin/time) of `gputrace report`, `convert` and `diff` (the trace against itself),
# printed with the trace's size and the bytes of memory per byte of trace. Bounded memory shows as
# the same peak at every length (bytes per byte falling); memory that grows with the trace shows
# as bytes per byte that stay put. GPUTRACE=BIN measures another build's gputrace on the same
# traces (a before/after: run it twice); KEEP=DIR keeps the traces there (recorded once, reused).
# LOOP=cudnn records a cuDNN-heavy loop instead (ti_cudnn_app: 60 backend executes, one kernel
# each, and a device sync a step, ~6 KB a step): every kernel is a library call's, whose link the
# analysis keeps for pass 2, the array that grows fastest on real convolutional training.
# Needs a build with the fakes (tests/fakes) and cupti_runtime_app. Results go to
# docs/performance.md by hand.
set -eu
BUILD=${1:-build}
[ $# -gt 0 ] && shift
STEPS_LIST=${*:-2000 20000 60000}
B=$(cd "$BUILD" && pwd)
LOOP=${LOOP:-launch}
case $LOOP in
launch) APP=$B/bin/cupti_runtime_app ;;
cudnn) APP=$B/bin/ti_cudnn_app ;;
*) echo "memory_growth.sh: LOOP is launch or cudnn" >&2; exit 2 ;;
esac
GT=${GPUTRACE:-$B/bin/gputrace}
[ -x "$APP" ] && [ -x "$GT" ] && [ -x /usr/bin/time ] || {
    echo "memory_growth.sh: needs gputrace_cli and cupti_runtime_app built, and /usr/bin/time"
    exit 2
}
WORK=${TMPDIR:-/tmp}/memory_growth_$$
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK"
TRACES=${KEEP:-$WORK}
mkdir -p "$TRACES"

record() { # STEPS: the trace of a launch loop of STEPS steps (recorded once into $TRACES)
    t=$TRACES/${LOOP}_loop_$1.gtrace
    [ "$LOOP" = launch ] && [ -s "$TRACES/loop_$1.gtrace" ] && t=$TRACES/loop_$1.gtrace
    if [ ! -s "$t" ]; then
        rm -rf "$WORK/rec" && mkdir -p "$WORK/rec"
        env LD_PRELOAD="$B/lib/libgputrace.so" LD_LIBRARY_PATH="$B/tests/fakes/lib" \
            GPUTRACE_CUPTI_LIB="$B/tests/fakes/lib/libcupti.so.13" GPUTRACE_DIR="$WORK/rec" \
            "$APP" $([ "$LOOP" = cudnn ] && echo loop "$1" || echo launch-loop "$1" 30) \
            >/dev/null 2>&1
        mv "$(ls "$WORK"/rec/*.gtrace | head -1)" "$t"
    fi
    echo "$t"
}

peak_kb() { # ARGS...: peak resident KB of gputrace ARGS
    /usr/bin/time -f "%M" "$GT" "$@" >/dev/null 2>"$WORK/time.txt" || true
    tail -1 "$WORK/time.txt"
}

echo "gputrace: $GT; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %14s  %-8s %12s %14s\n' steps "trace bytes" command "peak KB" "bytes/byte"
for n in $STEPS_LIST; do
    t=$(record "$n")
    size=$(wc -c <"$t")
    for cmd in report convert diff; do
        case $cmd in
        report) kb=$(peak_kb report "$t") ;;
        convert) kb=$(peak_kb convert -q -o "$WORK/out.pftrace" "$t") ;;
        diff) kb=$(peak_kb diff "$t" "$t") ;;
        esac
        rm -f "$WORK/out.pftrace"
        printf '%-8s %14s  %-8s %12s %14s\n' "$n" "$size" "$cmd" "$kb" \
            "$(awk -v k="$kb" -v s="$size" 'BEGIN { printf "%.2f", k * 1024 / s }')"
    done
done
