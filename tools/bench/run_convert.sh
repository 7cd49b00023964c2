#!/bin/sh
# run_convert.sh [BUILD_DIR] [RECORDS] — speed and peak memory of `gputrace convert` on a
# synthetic training-like trace (default 10 million records), Perfetto and JSON outputs.
# Results go to docs/evidence/performance-log.md ("Perfetto export") by hand.
set -eu
BUILD=${1:-build}
RECORDS=${2:-10000000}
BIN=$BUILD/bin/bench_convert
[ -x "$BIN" ] || { echo "run_convert.sh: build bench_convert first (cmake --build $BUILD --target bench_convert)"; exit 2; }
TRACE=${TMPDIR:-/tmp}/bench_convert_$$.gtrace
trap 'rm -f "$TRACE"' EXIT
"$BIN" gen "$TRACE" "$RECORDS"
ls -l "$TRACE"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates the times)"
# Three runs: the first one also pulls the trace into the page cache.
for i in 1 2 3; do "$BIN" run "$TRACE"; done
"$BIN" run "$TRACE" json
