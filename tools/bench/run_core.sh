#!/usr/bin/env bash
# run_core.sh — the recording core's hot-path cost: ns per event with 1 and 8 threads (best of 3
# runs) and instructions per event (valgrind --tool=callgrind, counting bench_one_event only).
# Usage: tools/bench/run_core.sh [BUILD_DIR]   (default: build; builds bench_core if needed)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
cmake --build "$BUILD" --target bench_core -j"$(nproc)" >/dev/null
BIN=$BUILD/bin/bench_core
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Default ring size; bench_core records in bursts that fit it, so no event is dropped.
export GPUTRACE_DIR=$OUT GPUTRACE_QUIET=1 GPUTRACE_DISABLE=0
EVENTS=1000000
best() { # threads
  local b=""
  for _ in 1 2 3; do
    v=$("$BIN" "$1" "$EVENTS" | sed 's/.*ns\/event=//')
    rm -f "$OUT"/*.gtrace
    if [ -z "$b" ] || awk "BEGIN{exit !($v < $b)}"; then b=$v; fi
  done
  echo "$b"
}
ns1=$(best 1)
ns8=$(best 8)
echo "ns/event: 1 thread $ns1, 8 threads $ns8 (cores: $(nproc))"
if command -v valgrind >/dev/null; then
  N=100000
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" --toggle-collect=bench_one_event \
    "$BIN" 1 "$N" >/dev/null 2>&1
  ir=$(grep -E "^(summary|totals):" "$OUT/cg.out" | head -1 | awk '{print $2}')
  # N measured events plus the 40000 warm-up events that touch the ring.
  awk -v ir="$ir" -v n="$N" 'BEGIN{printf "instructions/event: %.1f (callgrind, %d events)\n", ir/(n+40000), n+40000}'
else
  echo "instructions/event: valgrind not installed"
fi
