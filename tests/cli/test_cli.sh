#!/bin/sh
# test_cli.sh CASE GPUTRACE CLI_GEN WORK DATA — one case of the command-line tests (CMakeLists.txt).
# Each case prints what it checks and fails with the command's output when a check does not hold.
set -u
CASE=$1 GT=$2 GEN=$3 WORK=$4 DATA=$5
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
failures=0

fail() {
  echo "FAIL: $*"
  [ -f out ] && { echo "--- stdout"; head -c 2000 out; }
  [ -f err ] && { echo "--- stderr"; head -c 2000 err; }
  failures=$((failures + 1))
}

# run CMD...: runs it with a time limit, stdout in ./out, stderr in ./err; status in $rc.
run() {
  timeout "${LIMIT:-60}" "$@" >out 2>err
  rc=$?
}

expect_rc() { # WANT WHAT
  [ "$rc" = "$1" ] || fail "$2: exit status $rc, want $1"
}

case_endless() {
  LIMIT=10
  "$GEN" endless endless.gtrace || { fail "cli_gen endless"; return; }
  for cmd in info report convert; do
    run "$GT" $cmd endless.gtrace
    [ "$rc" != 124 ] || { fail "$cmd on a chunk of record_count 0xFFFFFFFF does not end"; continue; }
    [ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "$cmd on the crafted chunk: status $rc, want 1 or 2"
  done
  run "$GT" diff endless.gtrace "$DATA/healthy.gtrace"
  [ "$rc" != 124 ] || fail "diff on the crafted chunk does not end"
  [ "$rc" = 1 ] || [ "$rc" = 2 ] || fail "diff on the crafted chunk: status $rc, want 1 or 2"
  run "$GT" info endless.gtrace
  grep -q "damaged" err || fail "info does not call the crafted chunk damaged"
}

case_"$CASE"
[ "$failures" = 0 ] && echo "cli.$CASE: ok"
[ "$failures" = 0 ]
