#!/usr/bin/env bash
# tools/test.sh — build gputrace and run every test, on a fresh Debian/Ubuntu with the CUDA toolkit.
# Three builds: build/ (normal), build-asan/ (address,undefined: reader, analyzer, tests),
# build-tsan/ (thread: the recording core compiled into its tests). Ends with "N passed, N failed".
# Environment: JOBS (default: all cores), GPUTRACE_TEST_SKIP_SANITIZERS=1 to run build/ only,
# GPUTRACE_TEST_SKIP_PLAIN=1 to run the sanitizer builds only (tools/gpu/under_load.sh, where the
# device time is short),
# GPUTRACE_TEST_SKIP_PACKAGES=1 on a machine whose libraries came another way (no apt-get there:
# tools/gpu/under_load.sh unpacks them); the clang-format check is then skipped where clang-format
# is missing, and says so.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# ---------------------------------------------------------------- packages
PKGS=(cmake pkg-config libprotobuf-c-dev protobuf-c-compiler protobuf-compiler libunwind-dev
      libjansson-dev zlib1g-dev libdw-dev libiberty-dev clang clang-format valgrind python3 chromium)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})) && [ "${GPUTRACE_TEST_SKIP_PACKAGES:-0}" != 1 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test.sh: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      >/dev/null || { echo "test.sh: apt-get install failed" >&2; exit 1; }
  else
    echo "test.sh: missing packages: ${missing[*]}" >&2
    echo "test.sh: install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
if [ -z "${CUDA_HOME:-}" ] && [ -d /usr/local/cuda ]; then export CUDA_HOME=/usr/local/cuda; fi

# ---------------------------------------------------------------- builds
passed=0
failed=0
failed_names=()
run_build() { # name, ctest-regex ("" = all), cmake args...
  local dir=$1 regex=$2
  shift 2
  echo "== $dir: configure"
  if ! cmake -S "$ROOT" -B "$ROOT/$dir" -DGPUTRACE_BUILD_SAMPLES=OFF "$@" >"$ROOT/$dir.log" 2>&1; then
    tail -30 "$ROOT/$dir.log"
    echo "test.sh: $dir: configure failed (log: $dir.log)" >&2
    failed=$((failed + 1)); failed_names+=("$dir:configure"); return
  fi
  echo "== $dir: build"
  local targets=()
  [ "$dir" = build-tsan ] && targets=(--target core_tests preload_app gputrace_preload info_driver info_tests)
  if ! cmake --build "$ROOT/$dir" -j"$JOBS" "${targets[@]}" >>"$ROOT/$dir.log" 2>&1; then
    grep -E "error|Error" "$ROOT/$dir.log" | head -30
    echo "test.sh: $dir: build failed (log: $dir.log)" >&2
    failed=$((failed + 1)); failed_names+=("$dir:build"); return
  fi
  echo "== $dir: ctest"
  local args=(--test-dir "$ROOT/$dir" --output-on-failure -j"$JOBS" --timeout 900)
  [ -n "$regex" ] && args+=(-R "$regex")
  ctest "${args[@]}" >"$ROOT/$dir.ctest.log" 2>&1
  sed -n '/tests passed/,$p' "$ROOT/$dir.ctest.log"
  local p f
  p=$(grep -cE "Test +#[0-9]+: .* +Passed" "$ROOT/$dir.ctest.log")
  f=$(grep -cE "Test +#[0-9]+: .*(\*\*\*|Failed|Not Run|Timeout)" "$ROOT/$dir.ctest.log")
  passed=$((passed + p))
  failed=$((failed + f))
  if ((f)); then
    grep -E "Test +#[0-9]+: .*(\*\*\*|Failed|Not Run|Timeout)" "$ROOT/$dir.ctest.log"
    failed_names+=("$dir")
  fi
}

# Style: every tracked C file as clang-format (.clang-format) writes it; counted as one test.
echo "== clang-format"
if [ "${GPUTRACE_TEST_SKIP_PACKAGES:-0}" = 1 ] && ! command -v clang-format >/dev/null; then
  echo "clang-format is not installed here: skipped (not counted)"
else
  unformatted=$(git ls-files '*.c' '*.h' 2>/dev/null | while read -r f; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
  if [ -n "$unformatted" ]; then
    echo "not formatted (run: clang-format -i FILE):"; echo "$unformatted" | sed 's/^/  /'
    failed=$((failed + 1)); failed_names+=("clang-format")
  else
    echo "all C sources formatted"; passed=$((passed + 1))
  fi
fi

# Structure (tools/check_structure.py): file and header sizes, no include cycle between source
# units, the analyzer's stage order (includes and calls), the model's builder order, no function
# bodies in headers but the allowed hot paths; counted as one test.
echo "== structure"
if python3 "$ROOT/tools/check_structure.py" "$ROOT"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); failed_names+=("structure")
fi

[ "${GPUTRACE_TEST_SKIP_PLAIN:-0}" = 1 ] || run_build build ""
if [ "${GPUTRACE_TEST_SKIP_SANITIZERS:-0}" != 1 ]; then
  # The fuzzer already runs in build/; the sanitized builds skip it.
  run_build build-asan "" -DGPUTRACE_SANITIZE=address,undefined -DGT_FUZZ_SECONDS=5
  # TSan: the recording core (compiled into core_tests); the other suites are ASan's. core.fork
  # is left out: TSan cannot follow a thread started in a forked child ("dup thread").
  run_build build-tsan "^core\\.(roundtrip|threads|sigkill|sigterm|settings|preload|clock|clock_settings|clock_slew|drain_order)$" \
    -DGPUTRACE_SANITIZE=thread -DGPUTRACE_BUILD_ANALYZER=OFF
fi

echo
((${#failed_names[@]})) && echo "failed in: ${failed_names[*]}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
