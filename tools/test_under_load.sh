#!/usr/bin/env bash
# tools/test_under_load.sh [RUNS] — tools/test.sh (plain, ASan/UBSan and TSan builds, clang-format,
# structure) RUNS times (default 3) with the CPUs oversubscribed, as on a busy laptop or a shared CI
# runner: LOAD_FACTOR (default 3) CPU-bound processes per core run for the whole of each run, builds
# included. A test that depends on timing it does not control fails here first.
#
# The load is `stress-ng --cpu N` when stress-ng is installed (installed with apt-get when running
# as root, as tools/test.sh installs its packages), else N shell busy loops: the same load.
# Each run's output goes to build-load/run-K.log; one line per run says how it went, and the last
# line how many runs passed. Exit status 0 when every run passed.
# Environment: LOAD_FACTOR, JOBS (passed to tools/test.sh; default: the number of cores),
# GPUTRACE_TEST_SKIP_SANITIZERS=1 (build/ only, as for tools/test.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. "$ROOT/tools/lib.sh"
RUNS=${1:-3}
case "$RUNS" in '' | *[!0-9]*) echo "usage: tools/test_under_load.sh [RUNS]" >&2; exit 2 ;; esac
CORES=$(nproc 2>/dev/null || echo 2)
FACTOR=${LOAD_FACTOR:-3}
HOGS=$((CORES * FACTOR))
export JOBS=${JOBS:-$CORES}
LOGS=$ROOT/build-load
mkdir -p "$LOGS"

use_stress_ng=0
if command -v stress-ng >/dev/null ||
  { [ "${GPUTRACE_TEST_SKIP_PACKAGES:-0}" != 1 ] && ensure_packages stress-ng >/dev/null 2>&1; }; then
  command -v stress-ng >/dev/null && use_stress_ng=1
fi

load_pids=()
start_load() {
  load_pids=()
  if ((use_stress_ng)); then
    stress-ng --cpu "$HOGS" --timeout 0 --quiet &
    load_pids+=($!)
  else
    local i
    for ((i = 0; i < HOGS; i++)); do
      sh -c 'while :; do :; done' &
      load_pids+=($!)
    done
  fi
}

stop_load() {
  local p
  for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${load_pids[@]}"; do wait "$p" 2>/dev/null; done
  load_pids=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM

echo "test_under_load: $RUNS run(s) of tools/test.sh, JOBS=$JOBS, with $HOGS CPU-bound processes" \
  "on $CORES cores ($( ((use_stress_ng)) && echo "stress-ng --cpu $HOGS" || echo "shell busy loops"))"
good=0
for ((run = 1; run <= RUNS; run++)); do
  log=$LOGS/run-$run.log
  start_load
  t0=$(date +%s)
  "$ROOT/tools/test.sh" >"$log" 2>&1
  rc=$?
  took=$(($(date +%s) - t0))
  stop_load
  summary=$(grep -E "^[0-9]+ passed, [0-9]+ failed$" "$log" | tail -1)
  failed_in=$(grep "^failed in:" "$log" | tail -1)
  failing=$(grep -E "Test +#[0-9]+: .*(\*\*\*|Failed|Not Run|Timeout)" "$log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+).*/\1/' |
    sort -u | tr '\n' ' ')
  if ((rc == 0)); then
    good=$((good + 1))
    echo "run $run: passed (${summary:-no summary}) in $took s"
  else
    echo "run $run: FAILED (${summary:-no summary}) in $took s; ${failed_in:-} ${failing:+tests: $failing}(log: $log)"
  fi
done
echo "$good of $RUNS runs passed under load"
((good == RUNS))
