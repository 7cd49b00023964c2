#!/usr/bin/env bash
# Issue 31 item 5 on the GPU machine: `gputrace record` stops when it is told to, and a PyTorch
# program under gputrace keeps its KeyboardInterrupt. Uses the libgputrace.so and the analyzer
# packed here (tools/gpu/pack_devbin.sh; carry .devbin). About 2 minutes.
#  1. Python under LD_PRELOAD, after its first CUDA call: SIGINT's handler is Python's
#     default_int_handler (it was None when gputrace installed its own at load).
#  2. kill -INT of record alone (timeout --foreground): record passes it on; train.py (100,000
#     steps) raises KeyboardInterrupt, ends within seconds, record exits 130 with a whole trace.
#  3. record as a script's background job (SIGINT ignored there), kill -INT $!: record passes it on
#     as SIGTERM and says so; the run ends within seconds, status 143, the trace whole.
# Results: $OUT/record_signals/summary.md (PASS/FAIL lines, seconds from the signal to the end).
#   tools/gpu/record_signals.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/record_signals
rm -rf "$O"
mkdir -p "$O"
. tools/gpu/devbin.sh
S=$O/summary.md
echo "# record signals ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null))" >"$S"
pass() { echo "PASS $*" | tee -a "$S"; }
fail() { echo "FAIL $*" | tee -a "$S"; }
TRAIN=(python3 "$PWD/sample_apps/train.py" --steps 100000 --batch-size 8)

# 1. The interpreter's handler survives gputrace.
h=$(LD_PRELOAD="$LIB" GPUTRACE_DIR="$O/handler" timeout 120 python3 -c \
  'import signal, torch; torch.zeros(1, device="cuda"); print(signal.getsignal(signal.SIGINT))' 2>"$O/handler.err")
case "$h" in
*default_int_handler*) pass "Python's SIGINT handler under gputrace: $h" ;;
*) fail "Python's SIGINT handler under gputrace: '$h' ($(tail -2 "$O/handler.err"))" ;;
esac

# seconds_after T: seconds from the time T (date +%s.%N) to now
seconds_after() { awk -v t="$1" -v now="$(date +%s.%N)" 'BEGIN { printf "%.1f", now - t }'; }

# trace_whole NAME: NAME.gputrace's traces read whole and each has its end record (info exits 0
# for a trace without one, saying "ended abnormally"), into NAME.info.
trace_whole() {
  "$GT" info "$O/$1.gputrace" >"$O/$1.info" 2>&1 && grep -q '^  ended  *by ' "$O/$1.info" &&
    ! grep -q '^  ended  *abnormally' "$O/$1.info"
}

# 2. kill -INT of record alone: timeout --foreground signals record only, after 60 s of training.
t0=$(date +%s.%N)
(cd "$O" && timeout --foreground --preserve-status -s INT -k 120 60 "$GT" record --lib "$LIB" -q --no-report -o alone \
  -- "${TRAIN[@]}" >alone.out 2>alone.err; echo $? >alone.rc)
took=$(awk -v t="$(seconds_after "$t0")" 'BEGIN { printf "%.1f", t - 60 }')
rc=$(cat "$O/alone.rc")
grep -q KeyboardInterrupt "$O/alone.err" && [ "$rc" = 130 ] &&
  pass "kill -INT of record alone: KeyboardInterrupt, status $rc, record ended $took s after the signal (conversion included)" ||
  fail "kill -INT of record alone: status $rc, $(grep -c KeyboardInterrupt "$O/alone.err") KeyboardInterrupt lines"
[ "$(grep -c '^KeyboardInterrupt' "$O/alone.err")" -le 1 ] || fail "alone: more than one KeyboardInterrupt"
trace_whole alone &&
  pass "alone: the trace is whole ($(grep -E '^  (ended|lost records)' "$O/alone.info" | tr -s ' ' | tr '\n' ';'))" ||
  fail "alone: info: $(tail -3 "$O/alone.info")"

# 3. A script's background job: SIGINT is ignored there (POSIX), in record and in the program.
(cd "$O" && sh -c '"$@" >bg.out 2>bg.err & pid=$!; sleep 60; date +%s.%N >bg.signal; kill -INT $pid; wait $pid; echo $? >bg.rc' \
  sh "$GT" record --lib "$LIB" -q --no-report -o bg -- "${TRAIN[@]}")
took=$(seconds_after "$(cat "$O/bg.signal")")
rc=$(cat "$O/bg.rc")
grep -q "passed on as SIGTERM" "$O/bg.err" && [ "$rc" = 143 ] &&
  pass "background job, kill -INT: passed on as SIGTERM, status $rc, record ended $took s after the signal (conversion included)" ||
  fail "background job: status $rc, record said: $(grep '^gputrace record' "$O/bg.err" | head -3)"
trace_whole bg &&
  pass "background job: the trace is whole ($(grep -E '^  (ended|lost records)' "$O/bg.info" | tr -s ' ' | tr '\n' ';'))" ||
  fail "background job: info: $(tail -3 "$O/bg.info")"
echo "logs in $O"
