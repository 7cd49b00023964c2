#!/usr/bin/env bash
# GPU-machine evidence for the TSC trace clock (interpose/core/clock.c, GPUTRACE_CLOCK):
#   1. the clock source and the CPU's TSC flags;
#   2. read cost of clock_gettime(CLOCK_REALTIME), rdtsc and the library's clock (tsc and realtime
#      modes), and the TSC clock's agreement with CLOCK_REALTIME over 3 s (bench_wrap_clock, built
#      here with cc against the core's sources);
#   3. build-gpu/sample_apps/launch_bound under LD_PRELOAD=build-gpu/lib/libgputrace.so with
#      GPUTRACE_CLOCK=tsc and =realtime; for every kernel linked to its wrapped launch, GPU start
#      minus CPU launch begin (never negative when CPU and GPU times share one clock).
# Output: $OUT/tsc/summary.txt, $OUT/tsc/trace/{tsc,realtime}/*.gtrace. Under a minute.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
R="$OUT/tsc"
mkdir -p "$R/trace/tsc" "$R/trace/realtime" "$R/scratch"
S="$R/summary.txt"
LIB="$PWD/build-gpu/lib/libgputrace.so"
APP="$PWD/build-gpu/sample_apps/launch_bound"
exec > >(tee "$S") 2>&1
echo "# tsc evidence $(date -u +%FT%TZ) $(hostname)"

echo "## clock source and TSC flags"
for f in current_clocksource available_clocksource; do
  echo "$f: $(cat /sys/devices/system/clocksource/clocksource0/$f 2>/dev/null)"
done
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
echo "tsc flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E 'tsc|rdtscp' | sort -u | tr '\n' ' ')"
grep -o 'tsc=[a-z]*\|clocksource=[a-z-]*' /proc/cmdline 2>/dev/null | sed 's/^/kernel cmdline: /'

echo "## clock read cost and accuracy"
B=/tmp/gputrace_bench_wrap_clock
if cc -O2 -std=c11 -D_GNU_SOURCE -Iinterpose -Iinterpose/core -Iformat \
  tools/bench/bench_wrap_clock.c interpose/core/*.c format/*.c -lz -lpthread -o "$B"; then
  for c in tsc realtime; do
    echo "### GPUTRACE_CLOCK=$c"
    GPUTRACE_CLOCK=$c GPUTRACE_QUIET=1 GPUTRACE_DIR="$R/scratch" timeout 60 "$B" bench 3
  done
else
  echo "bench_wrap_clock: build failed"
fi
rm -rf "$R/scratch"

echo "## launch_bound: CPU launch begin before the kernel's GPU start"
if [ ! -f "$LIB" ] || [ ! -x "$APP" ]; then
  echo "missing $LIB or $APP: run tools/gpu/build.sh first"
  exit 1
fi
for c in tsc realtime; do
  d="$R/trace/$c"
  t0=$SECONDS
  GPUTRACE_CLOCK=$c GPUTRACE_DIR="$d" GPUTRACE_VERBOSE=1 LD_PRELOAD="$LIB" timeout 120 "$APP" \
    >"$d/stdout.txt" 2>&1
  echo "GPUTRACE_CLOCK=$c: rc=$? $((SECONDS - t0))s; $(grep -m1 'clock:' "$d/stdout.txt")"
  [ -x "$B" ] && GPUTRACE_DISABLE=1 "$B" check "$d"/*.gtrace
done
