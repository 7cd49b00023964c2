#!/bin/sh
# convert_memory.sh [BUILD_DIR] [STEPS] — peak memory (and CPU time) of `gputrace convert`, with
# and without advice, and of `gputrace report`, on a launch loop recorded on the test fakes
# (STEPS steps of 30 launches and a device sync; default 20000: 600,000 kernels, ~136 MB of
# trace; 150000 steps make ~1 GB), and of `gputrace report` and `gputrace diff` (the trace against
# itself). Needs a build with the fakes (tests/fakes) and cupti_runtime_app. TRACE=FILE measures an
# existing trace instead of recording one; GPUTRACE=BIN measures another build's gputrace on it
# (a before/after). Results go to docs/performance.md ("Long runs: memory per GB of trace") by hand.
set -eu
BUILD=${1:-build}
STEPS=${2:-20000}
B=$(cd "$BUILD" && pwd)
APP=$B/bin/cupti_runtime_app
GT=${GPUTRACE:-$B/bin/gputrace}
[ -x "$APP" ] && [ -x "$GT" ] || {
    echo "convert_memory.sh: build gputrace_cli and cupti_runtime_app first"
    exit 2
}
DIR=${TMPDIR:-/tmp}/convert_memory_$$
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR"
if [ -z "${TRACE:-}" ]; then
    env LD_PRELOAD="$B/lib/libgputrace.so" LD_LIBRARY_PATH="$B/tests/fakes/lib" \
        GPUTRACE_CUPTI_LIB="$B/tests/fakes/lib/libcupti.so.13" GPUTRACE_DIR="$DIR" \
        "$APP" launch-loop "$STEPS" 30 >/dev/null
    TRACE=$(ls "$DIR"/*.gtrace | head -1)
    echo "trace: $(wc -c <"$TRACE") bytes, $STEPS steps"
else
    echo "trace: $TRACE, $(wc -c <"$TRACE") bytes"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work inflates the times, not the memory)"
measure() { # LABEL ARGS...: peak memory of gputrace ARGS
    label=$1
    shift
    /usr/bin/time -f "$label: peak %M KB, %U s user, %e s wall" "$GT" "$@" \
        >/dev/null 2>"$DIR/time.txt" || true
    tail -1 "$DIR/time.txt"
}
measure "convert" convert -q -o "$DIR/out.pftrace" "$TRACE"
measure "convert --no-advice" convert -q --no-advice -o "$DIR/out.pftrace" "$TRACE"
measure "report" report "$TRACE"
measure "diff (the trace against itself)" diff "$TRACE" "$TRACE"
