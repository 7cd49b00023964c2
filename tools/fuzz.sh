#!/usr/bin/env bash
# tools/fuzz.sh — fuzz the .gtrace reader and the analyzer's commands longer than the test suite
# does (ctest runs each target GT_FUZZ_SECONDS, 30 s by default).
#
#   tools/fuzz.sh [SECONDS] [TARGET]     TARGET: reader, commands or all (default: all, 3600 s each)
#
# Builds build-fuzz/ with clang (libFuzzer + ASan + UBSan), seeds each corpus with the crafted files
# of tests/cli (cli_gen) and small traces from tests/data, and keeps the corpora in
# build-fuzz/corpus-TARGET so later runs start where this one stopped. Findings are written as
# build-fuzz/crash-*, timeout-*, oom-*; replay one with `build-fuzz/tests/cli/fuzz_commands FILE`
# (GT_FUZZ_VERBOSE=1 shows the commands' messages) and add it to tests/cli as a crafted case.
# Environment: JOBS (parallel fuzzing jobs per target, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${1:-3600}
WHICH=${2:-all}
JOBS=${JOBS:-1}
BUILD=$ROOT/build-fuzz
case $WHICH in reader | commands | all) ;; *) echo "usage: $0 [SECONDS] [reader|commands|all]" >&2; exit 2 ;; esac
command -v clang >/dev/null || { echo "clang is needed (apt-get install clang)" >&2; exit 1; }
[ -n "${CUDA_HOME:-}" ] || [ ! -d /usr/local/cuda ] || export CUDA_HOME=/usr/local/cuda

cmake -S . -B "$BUILD" -DGPUTRACE_BUILD_SAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$BUILD.log" 2>&1 ||
  { tail -20 "$BUILD.log"; exit 1; }
cmake --build "$BUILD" -j"${JOBS}" --target fuzz_reader fuzz_commands cli_gen core_tests >>"$BUILD.log" 2>&1 ||
  { grep -iE "error|no rule" "$BUILD.log" | head -20; exit 1; }

seed() { # corpus folder
  mkdir -p "$1"
  "$BUILD/bin/cli_gen" endless "$1/endless.gtrace"
  cp "$ROOT/tests/data/healthy.gtrace" "$ROOT/tests/data/launch_bound_batched.gtrace" \
    "$ROOT/tests/data/conv_legacy_get_system.gtrace" "$1/"
}

fuzz() { # name binary
  local corpus=$BUILD/corpus-$1
  seed "$corpus"
  echo "== fuzzing $1 for $SECONDS_EACH s (corpus $corpus)"
  local parallel=()
  ((JOBS > 1)) && parallel=(-jobs="$JOBS" -workers="$JOBS") # logs then go to fuzz-N.log
  "$2" -max_total_time="$SECONDS_EACH" -timeout=10 -max_len=262144 "${parallel[@]}" \
    -print_final_stats=1 -artifact_prefix="$BUILD/" "$corpus"
}

status=0
if [ "$WHICH" = reader ] || [ "$WHICH" = all ]; then
  fuzz reader "$BUILD/tests/core/fuzz_reader" || status=1
fi
if [ "$WHICH" = commands ] || [ "$WHICH" = all ]; then
  fuzz commands "$BUILD/tests/cli/fuzz_commands" || status=1
fi
ls "$BUILD"/crash-* "$BUILD"/timeout-* "$BUILD"/oom-* 2>/dev/null && status=1
exit $status
