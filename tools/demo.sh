#!/usr/bin/env bash
# tools/demo.sh — gputrace end to end in one command (the README's first command).
#
# Installs the build dependencies that are missing, builds gputrace, then
#  - on a machine with a GPU: records each sample app in sample_apps/ (and sample_apps/train.py
#    when torch and torchvision import) with `gputrace record`;
#  - without a GPU: analyzes the real traces recorded on an H200 and committed in tests/data/;
# writes the .perfetto-trace files under out/demo/, prints each report with its advice, and ends
# by naming the files to open in https://ui.perfetto.dev.
# Environment: JOBS (build parallelism), DEMO_OUT (default out/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
source tools/lib.sh
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
OUTDIR=${DEMO_OUT:-$ROOT/out/demo}

# Bold headings on a terminal only: piped into a file or CI log, raw escape codes are noise.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD='' PLAIN=''; fi
say() { printf '\n%s== %s%s\n' "$BOLD" "$*" "$PLAIN"; }

say "dependencies"
ensure_packages cmake make gcc g++ pkg-config libprotobuf-c-dev protobuf-c-compiler libjansson-dev \
  zlib1g-dev libunwind-dev libdw-dev libiberty-dev python3
find_cuda

say "build (build/, log in build-demo.log)"
GPU=0
have_gpu && GPU=1
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTRACE_BUILD_SAMPLES=$([ $GPU = 1 ] && echo ON || echo OFF) \
  >build-demo.log 2>&1 || { tail -30 build-demo.log; exit 1; }
targets=(--target gputrace_cli gputrace_preload)
[ $GPU = 1 ] && targets=()
cmake --build build -j"$JOBS" "${targets[@]}" >>build-demo.log 2>&1 || {
  grep -E "error|Error" build-demo.log | head -30; exit 1; }
GPUTRACE=$ROOT/build/bin/gputrace
echo "built $GPUTRACE and build/lib/libgputrace.so"

rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
written=()

record() { # name, command...
  local name=$1; shift
  say "gputrace record -o $name -- ${*#$ROOT/}"
  (cd "$OUTDIR" && "$GPUTRACE" record -q -o "$name" -- "$@") || echo "(exit status $?)"
  [ -f "$OUTDIR/$name.perfetto-trace" ] && written+=("$OUTDIR/$name.perfetto-trace")
}

analyze() { # a committed trace file or run folder
  local src=$1 name
  name=$(basename "$src"); name=${name%.gtrace}; name=${name%.gputrace}
  say "gputrace report ${src#$ROOT/}"
  "$GPUTRACE" convert -q "$src" -o "$OUTDIR/$name.perfetto-trace" || echo "(convert status $?)"
  "$GPUTRACE" report "$src" || echo "(report status $?)"
  [ -f "$OUTDIR/$name.perfetto-trace" ] && written+=("$OUTDIR/$name.perfetto-trace")
}

if [ $GPU = 1 ]; then
  echo "GPU found: $(nvidia-smi -L | head -1)"
  S=$ROOT/build/sample_apps
  record pageable_copies "$S/pageable_copies"
  record sync_every_iter "$S/sync_every_iter"
  record launch_bound "$S/launch_bound"
  record alloc_in_loop "$S/alloc_in_loop"
  record healthy "$S/healthy"
  [ -x "$S/conv_backend" ] && record conv_backend_heuristic "$S/conv_backend" heuristic
  [ -x "$S/conv_legacy" ] && record conv_legacy_get "$S/conv_legacy" get
  if python3 -c 'import torch, torchvision; assert torch.cuda.is_available()' 2>/dev/null; then
    record train_slow python3 "$ROOT/sample_apps/train.py" --steps 30
    record train_fast python3 "$ROOT/sample_apps/train.py" --steps 30 --pin-memory \
      --non-blocking --benchmark --amp --workers 4
  else
    echo "(torch/torchvision not importable: train.py skipped)"
  fi
else
  say "no GPU here: analyzing the traces recorded on an NVIDIA H200 (tests/data/)"
  shopt -s nullglob
  sources=("$ROOT"/tests/data/*.gtrace "$ROOT"/tests/data/*.gputrace)
  for dir in "$ROOT"/tests/data/*/; do
    compgen -G "$dir*.gtrace" >/dev/null && sources+=("${dir%/}")
  done
  if ((${#sources[@]} == 0)); then
    echo "tests/data/ holds no recorded traces yet; on a GPU machine this demo records them." >&2
    exit 1
  fi
  for src in "${sources[@]}"; do analyze "$src"; done
fi

say "open these in https://ui.perfetto.dev (Open trace file)"
for f in "${written[@]}"; do echo "  ${f#$ROOT/}"; done
((${#written[@]})) || { echo "  (none were written: see the messages above)"; exit 1; }
