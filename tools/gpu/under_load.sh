#!/usr/bin/env bash
# tools/gpu/under_load.sh start [RUNS] | wait SECONDS — on the GPU machine (16 cores): the whole
# suite under load (tools/test_under_load.sh: plain, ASan/UBSan and TSan builds with LOAD_FACTOR
# CPU-bound processes per core), which the 2-core development machine takes hours for.
# The machine has no build packages and no network: the Debian packages that
# tools/gpu/fetch_build_debs.sh put in .deps/ (carried) are unpacked into /opt/gtdeps and found
# through PATH, CMAKE_PREFIX_PATH, PKG_CONFIG_PATH and LD_LIBRARY_PATH.
# A device call lasts 10 minutes at most: `start` runs the suite detached from the call (its log
# in build-load/), `wait N` waits up to N seconds for it to end, then prints where it stands and
# copies the logs to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
DEPS=/opt/gtdeps
STATE=$ROOT/build-load/under_load

unpack_deps() {
  [ -d "$ROOT/.deps" ] || { echo "under_load: no .deps/ (run tools/gpu/fetch_build_debs.sh here and carry .deps)" >&2; exit 2; }
  mkdir -p "$DEPS"
  local d
  for d in "$ROOT"/.deps/*.deb; do dpkg -x "$d" "$DEPS"; done
  # The .pc files name /usr: point them at where the packages were unpacked.
  sed -i "s#^prefix=/usr#prefix=$DEPS/usr#" "$DEPS"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
}

case "${1:-}" in
start)
  RUNS=${2:-1}
  unpack_deps
  export PATH=$DEPS/usr/bin:$PATH
  export CMAKE_PREFIX_PATH=$DEPS/usr
  export PKG_CONFIG_PATH=$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig
  export LD_LIBRARY_PATH=$DEPS/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export GPUTRACE_TEST_SKIP_PACKAGES=1
  mkdir -p "$ROOT/build-load"
  rm -f "$STATE.done"
  setsid nohup bash -c "'$ROOT/tools/test_under_load.sh' $RUNS >'$STATE.log' 2>&1; echo \$? >'$STATE.done'" \
    </dev/null >/dev/null 2>&1 &
  echo "under_load: started $RUNS run(s) (log: build-load/under_load.log)"
  ;;
wait)
  limit=${2:-500}
  for ((i = 0; i < limit; i += 5)); do [ -e "$STATE.done" ] && break; sleep 5; done
  cat "$STATE.log" 2>/dev/null
  if [ -e "$STATE.done" ]; then echo "under_load: finished, status $(cat "$STATE.done")"
  else echo "under_load: still running"; ls -t "$ROOT"/build-load/run-*.log 2>/dev/null | head -1 | xargs -r tail -5; fi
  if [ -n "${OUT:-}" ]; then cp "$ROOT"/build-load/*.log "$OUT"/ 2>/dev/null; cp "$ROOT"/build*.ctest.log "$OUT"/ 2>/dev/null; fi
  ;;
*)
  echo "usage: tools/gpu/under_load.sh start [RUNS] | wait SECONDS" >&2
  exit 2
  ;;
esac
