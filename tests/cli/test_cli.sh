#!/bin/sh
# test_cli.sh CASE GPUTRACE CLI_GEN WORK DATA — one case of the command-line tests (CMakeLists.txt).
# Each case prints what it checks and fails with the command's output when a check does not hold.
# Environment: GT_LIB, the libgputrace.so that `record --lib` preloads.
set -u
CASE=$1 GT=$2 GEN=$3 WORK=$4 DATA=$5
LIB=${GT_LIB:?GT_LIB names libgputrace.so}
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
  LIMIT=120 # ends a hang; a loaded machine under a sanitizer takes tens of seconds for what is quick
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

# Nothing but out, err and the named files in this folder: no temporary file left behind.
no_leftovers() { # NAME...
  left=$(ls -A | while read -r f; do
    keep=0
    for k in out err "$@"; do [ "$f" = "$k" ] && keep=1; done
    [ $keep = 1 ] || echo "$f"
  done)
  [ -z "$left" ] || fail "files left behind: $left"
}

case_output() {
  H=$DATA/healthy.gtrace
  run "$GT" convert -q "$H" -o plain.pt
  expect_rc 0 "convert to a new file"
  [ -s plain.pt ] || fail "convert wrote no plain.pt"
  echo old >existing.pt
  run "$GT" convert -q "$H" -o existing.pt
  expect_rc 0 "convert over a regular file"
  cmp -s plain.pt existing.pt || fail "a regular file is not replaced by the trace"

  echo target >target
  ln -s target link.pt
  run "$GT" convert "$H" -o link.pt
  expect_rc 2 "convert -o SYMLINK"
  [ -L link.pt ] || fail "the symbolic link was replaced"
  [ "$(cat target)" = target ] || fail "the link's target was written"
  grep -q "link.pt is a symbolic link" err || fail "no error naming the symbolic link"

  mkfifo fifo.pt
  run "$GT" convert "$H" -o fifo.pt
  expect_rc 2 "convert -o FIFO"
  [ -p fifo.pt ] || fail "the FIFO was replaced"
  grep -q "fifo.pt is a FIFO" err || fail "no error naming the FIFO"

  mkdir folder.pt
  run "$GT" convert "$H" -o folder.pt
  expect_rc 2 "convert -o FOLDER"
  grep -q "folder.pt is a folder" err || fail "no error naming the folder"

  if mknod chardev.pt c 1 3 2>/dev/null; then # a null device in a user's folder (root only)
    run "$GT" convert "$H" -o chardev.pt
    expect_rc 2 "convert -o CHARACTER-DEVICE"
    [ -c chardev.pt ] || fail "the character device was replaced by a regular file"
  else
    echo "(not root: the character device check is skipped)"
  fi

  run "$GT" convert -q "$H" -o -
  expect_rc 0 "convert -o -"
  cmp -s out plain.pt || fail "convert -o - does not write the trace to standard output"
  [ ! -e ./- ] || fail "convert -o - created a file named '-'"
  # A link planted where the old code put its temporary file (OUT.tmpPID; exec keeps the pid).
  echo victim >victim
  sh -c 'ln -s victim planted.pt.tmp$$ && exec "$0" convert -q "$1" -o planted.pt' "$GT" "$H"
  [ "$(cat victim)" = victim ] || fail "a link planted at OUT.tmpPID was followed"
  [ -s planted.pt ] || fail "convert did not write planted.pt beside the planted link"
  rm -f planted.pt.tmp*
  no_leftovers plain.pt existing.pt target link.pt fifo.pt folder.pt chardev.pt victim planted.pt
}

case_write_error() {
  BIG=$DATA/resnet50_train.gtrace
  # ulimit -f: without SIGXFSZ ignored the converter is killed and leaves its temporary file.
  (ulimit -f 64 && exec timeout 60 "$GT" convert "$BIG" -o big.pt >out 2>err)
  rc=$?
  expect_rc 2 "convert past ulimit -f"
  [ ! -e big.pt ] || fail "a partial big.pt is left under the final name"
  grep -q "wrote" err && fail "a failed write still reports 'wrote'"
  grep -q "cannot write big.pt: File too large" err || fail "no error naming big.pt and EFBIG"
  no_leftovers
  if [ -w /dev/full ]; then
    timeout 60 "$GT" convert "$DATA/healthy.gtrace" -o - >/dev/full 2>err
    rc=$?
    expect_rc 2 "convert -o - onto a full device"
    grep -q "wrote" err && fail "convert -o - onto a full device reports 'wrote'"
    for cmd in info report; do
      timeout 60 "$GT" $cmd "$DATA/healthy.gtrace" >/dev/full 2>err
      rc=$?
      expect_rc 2 "$cmd onto a full device"
      grep -q "gputrace $cmd: cannot write to standard output" err ||
        fail "$cmd onto a full device says nothing"
    done
    timeout 60 "$GT" diff "$DATA/healthy.gtrace" "$DATA/healthy.gtrace" >/dev/full 2>err
    rc=$?
    expect_rc 2 "diff onto a full device"
  fi
}

case_record_missing() {
  run "$GT" record --lib "$LIB" -o missing -- ./no-such-program
  expect_rc 127 "record of a missing program"
  [ ! -e missing.gputrace ] || fail "record of a missing program leaves missing.gputrace/"
  grep -q "cannot run './no-such-program'" err || fail "record does not say the program is missing"
}

# usage_error WHAT CMD: status 2 and one message "gputrace CMD: ..." plus the pointer to --help.
usage_error() {
  expect_rc 2 "$1"
  head -1 err | grep -q "^gputrace $2: " || fail "$1: the message does not start with 'gputrace $2: '"
  grep -q "cannot open" err && fail "$1: an option was taken for a file"
  [ ! -s out ] || fail "$1: something was printed before the usage error"
}

case_options() {
  H=$DATA/healthy.gtrace S=$DATA/sync_every_iter.gtrace
  run "$GT" report "$H" --json
  expect_rc 0 "report FILE --json"
  python3 -c 'import json,sys; json.load(open("out"))' 2>/dev/null || fail "report FILE --json is not JSON"
  run "$GT" report "$S" --fail-on=warning
  expect_rc 3 "report FILE --fail-on=warning (sync_every_iter has warnings)"
  run "$GT" report --fail-on warning "$S"
  expect_rc 3 "report --fail-on warning FILE"
  run "$GT" diff "$H" "$S" --json
  expect_rc 0 "diff A B --json"
  python3 -c 'import json,sys; json.load(open("out"))' 2>/dev/null || fail "diff A B --json is not JSON"
  run "$GT" diff "$H" --top=3 "$S"
  expect_rc 0 "diff A --top=3 B"

  run "$GT" info --bogus "$H"
  usage_error "info --bogus FILE" info
  grep -q "unknown option '--bogus'" err || fail "info does not name --bogus"
  for cmd in report diff; do
    for bad in abc -5 "" 1x 99999999999999999999; do
      run "$GT" $cmd "$H" "$H" "--top=$bad"
      usage_error "$cmd --top='$bad'" $cmd
    done
    run "$GT" $cmd "$H" "$H" --top
    usage_error "$cmd FILE --top (no value)" $cmd
  done
  run "$GT" report "$H" --fail-on=sometimes
  usage_error "report --fail-on=sometimes" report
  run "$GT" convert "$H" --format=xml
  usage_error "convert --format=xml" convert
  run "$GT" convert -x "$H"
  usage_error "convert -x" convert
  grep -q "unknown option '-x'" err || fail "convert does not name -x"
  run "$GT" diff "$H"
  usage_error "diff with one run" diff
  run "$GT" report
  usage_error "report without a trace" report
  run "$GT" record --bogus -- true
  usage_error "record --bogus" record
  run "$GT" record --capture sometimes -- true
  usage_error "record --capture sometimes" record
  run "$GT" record --capture trigger-file: -- true
  usage_error "record --capture trigger-file: (no path)" record
  # --capture reaches the program as GPUTRACE_CAPTURE
  run "$GT" record --lib "$LIB" -q -o cap --capture trigger-file:/tmp/go -- sh -c 'echo "capture=$GPUTRACE_CAPTURE"'
  grep -qx "capture=trigger-file:/tmp/go" out || fail "record --capture: the program saw '$(cat out)'"
  # --capture signal: the capture signal sent to gputrace record reaches the program (which traps
  # it here) instead of ending gputrace record. The program sends it at once, before record may
  # have seen its pid, and waits for it (50 s at most: a ceiling, not the expected time).
  run "$GT" record --lib "$LIB" -q -o capsig --capture signal -- sh -c 'got=; trap "echo got-usr2; got=1" USR2; kill -USR2 $PPID; i=0; while [ -z "$got" ] && [ $i -lt 500 ]; do sleep 0.1; i=$((i + 1)); done; echo done'
  expect_rc 0 "record --capture signal"
  grep -qx "got-usr2" out || fail "record --capture signal did not pass SIGUSR2 on: '$(cat out)'"

  # -- ends the options: a file whose name starts with '-'
  cp "$H" ./-x.gtrace
  run "$GT" info -- -x.gtrace
  expect_rc 0 "info -- -x.gtrace"
  run "$GT" convert -q -o "$WORK/dash.pt" -- -x.gtrace
  expect_rc 0 "convert -o OUT -- -x.gtrace"
  # record: the options end at COMMAND, whose own options are its own
  run "$GT" record --lib "$LIB" -q -o rec sh -c 'exit 5' sh --json
  expect_rc 5 "record ... COMMAND --json (COMMAND's option)"
  for cmd in info convert report diff record; do
    run "$GT" $cmd --help
    expect_rc 0 "$cmd --help"
    grep -q "^usage: gputrace $cmd" out || fail "$cmd --help prints no usage on stdout"
  done
}

case_report_text() {
  : >all
  for f in "$DATA"/*.gtrace; do
    run "$GT" report "$f"
    cat out >>all
  done
  grep -E "evidence:.*=[-0-9.]+e[-+][0-9]" all && fail "evidence printed in scientific notation"
  grep -E "versions .*cuBLAS 0$" all && fail "cuBLAS version 0 where cuDNN shows '-'"
  grep -q "versions .*cuBLAS -$" all || fail "no trace without cuBLAS shows 'cuBLAS -'"
  grep -q "versions .*cuBLAS 13\.[0-9]*\.[0-9]*$" all || fail "the cuBLAS version is not major.minor.patch"
  grep -E "per step .*allocations [0-9.]+$" all && fail "allocations per step without a unit"
  grep -qE "per step .*[0-9.]+ allocation calls$" all || fail "no allocation calls per step"
  # diff of two runs without ranks and without steps (several conv layers' loops, no one step):
  # '-' rather than -1 and 0.000
  run "$GT" diff "$DATA/conv_legacy_get_system.gtrace" "$DATA/conv_backend_heuristic_pip.gtrace"
  expect_rc 0 "diff conv_legacy_get_system conv_backend_heuristic_pip"
  grep -E "^  rank .*-1" out && fail "diff shows rank -1"
  grep -qE "^  step ms \(median\) +- +- +-$" out || fail "diff shows a step time for runs without steps"
  rm -f all
}

# tools/demo.sh's headings, piped (not a terminal): no raw escape codes.
case_demo_color() {
  grep -E '^(say\(\)|if \[ -t 1 \])' "$DATA/../../tools/demo.sh" >say.sh
  grep -q '^say()' say.sh || { fail "tools/demo.sh defines no say()"; return; }
  bash -c '. ./say.sh; say heading' >out 2>err </dev/null
  grep -q "== heading" out || fail "say printed no heading"
  grep -q "$(printf '\033')" out && fail "tools/demo.sh prints escape codes when not on a terminal"
  rm -f say.sh
}

# A trace whose module map names a FIFO: symbolizing must not block on it.
case_module_fifo() {
  LIMIT=120
  mkfifo module.fifo
  "$GEN" module module.gtrace "$WORK/module.fifo" || { fail "cli_gen module"; return; }
  for cmd in report convert; do
    run "$GT" $cmd module.gtrace
    [ "$rc" != 124 ] || { fail "$cmd blocks on a FIFO named as a module"; continue; }
    expect_rc 0 "$cmd on a trace naming a FIFO as a module"
  done
  run "$GT" report module.gtrace
  grep -q "cudaDeviceSynchronize" out || fail "the report lost the sync call"
}

# A FIFO given as a trace, or lying in a run folder as *.gtrace: refused, never waited on.
case_fifo_input() {
  LIMIT=120
  mkdir run && mkfifo run/a.gtrace && cp "$DATA/healthy.gtrace" run/b.gtrace
  for cmd in info report convert; do
    run "$GT" $cmd run/a.gtrace
    [ "$rc" != 124 ] || { fail "$cmd waits on a FIFO given as a trace"; continue; }
    expect_rc 2 "$cmd FIFO"
    grep -q "a.gtrace: cannot open: not a regular file" err || fail "$cmd does not say the FIFO is no file"
  done
  run "$GT" report run
  [ "$rc" != 124 ] || fail "report waits on a FIFO inside a run folder"
  grep -q "gputrace report: pid" out || fail "report of a folder with a FIFO lost the real trace"
}

case_"$CASE"
[ "$failures" = 0 ] && echo "cli.$CASE: ok"
[ "$failures" = 0 ]
