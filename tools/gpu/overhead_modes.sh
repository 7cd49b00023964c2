#!/usr/bin/env bash
# Issue 18 items 3-5 on the GPU machine: the hardware-trace fallback (an H200 has no hardware
# event timestamps: CUPTI must refuse and gputrace must say "CUPTI instrumentation"), on-demand
# capture by signal and by trigger file, GPU sampling, the flight recorder (exit, trigger, crash) and
# convert --max-mb on a real trace, with PyTorch ResNet-18 b4. Uses the libgputrace.so and the
# analyzer packed here (tools/gpu/pack_devbin.sh; carry .devbin). About 2 minutes.
# Results: $OUT/modes/summary.md (PASS/FAIL lines and the figures), traces and logs in modes.tgz.
#   tools/gpu/overhead_modes.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/modes; W=$(mktemp -d); mkdir -p "$O"
. tools/gpu/devbin.sh
S=$O/summary.md
echo "# overhead modes ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null))" >"$S"
pass() { echo "PASS $*" | tee -a "$S"; }
fail() { echo "FAIL $*" | tee -a "$S"; }
count() { "$DUMP" "$1" 2>/dev/null | awk -v k="$2" '$1 == "count" && $2 == k { print $3 }' | grep . || echo 0; }

# run NAME VAR=VALUE... -- ARGS...: one traced process, trace in $W/NAME/, logs $W/NAME.{out,err}
run() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  mkdir -p "$W/$name"
  env LD_PRELOAD="$LIB" GPUTRACE_DIR="$W/$name" GPUTRACE_VERBOSE=1 "${envs[@]}" \
    timeout 300 python3 tools/gpu/overhead_modes.py "$@" >"$W/$name.out" 2>"$W/$name.err"
  echo $? >"$W/$name.rc"
  trace=$(ls "$W/$name"/*.gtrace 2>/dev/null | head -1)
  "$GT" info "$W/$name" >"$W/$name.info" 2>&1
  echo "## $name: rc $(cat "$W/$name.rc"), $(grep STEP_MS "$W/$name.out"), kernels $(count "$trace" 50), launches $(count "$trace" 14)" >>"$S"
}

# 1. Hardware trace: asked for, refused on Hopper, fallback said in verbose and by info.
run plain -- plain --steps 30
grep -m1 "kernel timestamps:" "$W/plain.err" >>"$S"
grep -q "^  kernel timestamps *CUPTI instrumentation" "$W/plain.info" && pass "hw trace: fallback on this GPU (info: CUPTI instrumentation)" || fail "hw trace: $(grep 'kernel timestamps' "$W/plain.info" "$W/plain.err")"
K_ALL=$(count "$trace" 50)

# 2. Capture by signal and by trigger file: about a third of the kernels, one window.
run signal GPUTRACE_CAPTURE=signal -- signal --steps 30
K=$(count "$trace" 50)
grep -q "^  capture *1 window (the capture signal)" "$W/signal.info" && [ "$K" -gt 0 ] && [ "$K" -lt $((K_ALL * 2 / 3)) ] &&
  pass "capture signal: $K of $K_ALL kernels, $(grep '^  capture' "$W/signal.info")" || fail "capture signal: $K of $K_ALL kernels; $(grep '^  capture' "$W/signal.info")"
run trigger GPUTRACE_CAPTURE="trigger-file:$W/go" -- trigger --steps 30 --trigger "$W/go"
K=$(count "$trace" 50)
grep -q "^  capture *1 window (the trigger file)" "$W/trigger.info" && [ "$K" -gt 0 ] && [ "$K" -lt $((K_ALL * 2 / 3)) ] &&
  pass "capture trigger file: $K of $K_ALL kernels" || fail "capture trigger file: $K of $K_ALL kernels; $(grep '^  capture' "$W/trigger.info")"

# 2b. GPU sampling: calls all along, CUPTI's records 1 s of every 2 (about half the kernels of
# 60 steps, i.e. about as many as the 30-step plain run).
run sample GPUTRACE_SAMPLE=1/1 -- plain --steps 60 --sleep-ms 40
K=$(count "$trace" 50)
grep -q "^  GPU sampled" "$W/sample.info" && [ "$K" -gt 0 ] && [ "$K" -lt $((K_ALL * 8 / 5)) ] &&
  pass "GPU sampling: $K kernels (a full 60-step run: about $((K_ALL * 2))); $(grep '^  GPU sampled' "$W/sample.info")" ||
  fail "GPU sampling: $K kernels of about $((K_ALL * 2)); $(grep '^  GPU sampled' "$W/sample.info")"

# 3. Flight recorder: 2 s kept of a ~6 s run at exit; a trigger in the middle; a crash.
run flight_exit GPUTRACE_FLIGHT_RECORDER=2 -- plain --steps 120 --sleep-ms 40
grep -q "^  flight recorder *last 2 s kept; 1 write (the last at exit)" "$W/flight_exit.info" && grep -q "state *whole" "$W/flight_exit.info" &&
  pass "flight recorder at exit: $(grep '^  flight' "$W/flight_exit.info")" || fail "flight exit: $(cat "$W/flight_exit.info" | head -40)"
run flight_trigger GPUTRACE_FLIGHT_RECORDER=2 GPUTRACE_CAPTURE=signal -- signal --steps 90 --sleep-ms 40
grep -q "^  flight recorder *last 2 s kept; 3 writes" "$W/flight_trigger.info" &&
  pass "flight recorder triggered twice + exit: $(grep '^  flight' "$W/flight_trigger.info")" || fail "flight trigger: $(grep -E '^  (flight|state)' "$W/flight_trigger.info")"
run flight_crash GPUTRACE_FLIGHT_RECORDER=2 -- plain --steps 60 --sleep-ms 40 --abort
grep -q "the last at fatal signal" "$W/flight_crash.info" && [ "$(cat "$W/flight_crash.rc")" = 134 ] &&
  pass "flight recorder at a crash: $(grep '^  flight' "$W/flight_crash.info")" || fail "flight crash: rc $(cat "$W/flight_crash.rc"); $(grep -E '^  (flight|state|ended)' "$W/flight_crash.info")"

# 4. convert --max-mb on the longest of these traces.
"$GT" convert --max-mb 1 -o "$W/flight_exit.pftrace" "$W/plain" 2>"$W/maxmb.err"; rc=$?
sz=$(stat -c %s "$W/flight_exit.pftrace" 2>/dev/null || echo 0)
cat "$W/maxmb.err" >>"$S"
[ $rc = 0 ] && [ "$sz" -lt 1048576 ] && pass "convert --max-mb 1: $sz bytes" || fail "convert --max-mb 1: rc $rc, $sz bytes"

tar czf "$O/modes.tgz" -C "$W" . 2>/dev/null
cat "$S"
rm -rf "$W"
