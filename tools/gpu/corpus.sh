#!/usr/bin/env bash
# GPU corpus (issue 21, item 9): programs gputrace did not write, in styles the sample apps do not
# cover (sample_apps/corpus/*.py: CuPy, a Triton kernel loop, JAX/XLA, DDP over gloo with a slow
# rank, a DataLoader-bound loop and its fix, a JIT-heavy start-up, torch.compile with CUDA graphs).
# Each program runs twice: untraced (its own timing, the CORPUS line it prints last), then recorded
# the way `gputrace record` records (LD_PRELOAD=libgputrace.so, GPUTRACE_DIR=a run folder for the
# whole process tree, NVTX_INJECTION64_PATH) — the analyzer needs protobuf-c, which this machine
# lacks, so the traces are analyzed after they come back. Every run has its own timeout, so one
# failure does not stop the rest, and the script stops starting runs when its budget is spent.
#
# When the analyzer travels in .devbin (tools/gpu/pack_devbin.sh, carried), each recorded run is
# also archived there (`gputrace archive`: the frames' names kept with the run, read on the machine
# that has the libraries) and reported (report.txt), budget permitting; without it, only recorded.
#
# Run from the repo root on the GPU machine:   OUT=<folder> bash tools/gpu/corpus.sh
# Output (two files): $OUT/corpus.txt      summary: each run's command, rc, wall time, CORPUS line,
#                                           trace files and bytes
#                     $OUT/corpus.tar.gz   corpus/<case>/{cmd.txt,untraced.*,traced.*,ls.txt,run/,
#                                           report.txt}
#                                           and corpus/{facts.txt,build.log,corpus.txt}
# Time: about 5 minutes. No run starts, and a run's timeout is cut, past CORPUS_BUDGET_S (default
# 430) s from the script's start, build included, so the whole script ends within 8 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?OUT must name the folder for results}"
REPO=$PWD
# shellcheck source=tools/gpu/corpus_lib.sh
. "$REPO/tools/gpu/corpus_lib.sh"
WORK=${CORPUS_WORK:-/tmp/gputrace-corpus} C=${CORPUS_WORK:-/tmp/gputrace-corpus}/corpus
SUMMARY=$C/corpus.txt PY=${PYTHON:-python3} BUDGET_S=${CORPUS_BUDGET_S:-430}
corpus_start

# --- build libgputrace.so as tools/gpu/build.sh does (no analyzer, no samples: faster)
# CORPUS_LIB: a libgputrace.so built elsewhere (tools/gpu/pack_devbin.sh's .devbin): no build here.
if [ -n "${CORPUS_LIB:-}" ]; then
  LIB=$(readlink -f "$CORPUS_LIB")
else
  corpus_build || note "corpus.sh: the build failed (build.log above); nothing recorded"
  LIB=$REPO/build-gpu/lib/libgputrace.so
fi
corpus_facts "$LIB"
corpus_env

# The analyzer, when carried in .devbin and new enough to archive.
G=$REPO/.devbin/bin/gputrace
if [ -x "$G" ] && "$G" archive --help >/dev/null 2>&1; then
  note "analyzer: $G (archive and report each run)"
else
  note "analyzer: none carried (.devbin) or without 'archive': runs recorded only"
  G=
fi

# analyze CASE: keep the frames' names with the run and report it, here where the libraries are.
analyze() {
  local dir=$C/$1
  [ -n "$G" ] && [ -d "$dir/run" ] || return
  if [ "$(budget_left)" -lt 60 ]; then
    note "   analyze: skipped, budget nearly spent"
    return
  fi
  timeout -k 5 40 "$G" archive "$dir/run" >>"$dir/ls.txt" 2>&1
  timeout -k 5 40 "$G" report "$dir/run" >"$dir/report.txt" 2>&1
  note "   report rc=$? ($(grep -c . "$dir/report.txt") lines)"
}

# case NAME TIMEOUT CMD...: untraced, then traced.
run_case() {
  local name=$1 limit=$2
  shift 2
  mkdir -p "$C/$name"
  echo "$*" >"$C/$name/cmd.txt"
  note "== $name: $* ($(date +%T), $(budget_left) s of budget left)"
  run_one "$name" untraced "$limit" "$@"
  run_one "$name" traced "$limit" "$@"
  list_run "$name"
  analyze "$name"
}

P=$REPO/sample_apps/corpus
if [ -f "$LIB" ]; then
  run_case cupy_loop 60 "$PY" "$P/cupy_loop.py"
  run_case triton_loop 60 "$PY" "$P/triton_loop.py"
  run_case jax_step 75 "$PY" "$P/jax_step.py"
  run_case ddp_gloo_slow 90 "$PY" -m torch.distributed.run --standalone --nproc_per_node=2 \
    "$P/ddp_gloo_slow.py" --slow-rank 1 --slow-ms 15
  run_case dataloader_bound 60 "$PY" "$P/dataloader_bound.py" --workers 0
  run_case dataloader_fixed 60 "$PY" "$P/dataloader_bound.py" --workers 4 --pin-memory
  run_case jit_heavy 75 "$PY" "$P/jit_heavy.py"
  run_case compile_graphs 120 "$PY" "$P/compile_graphs.py"
fi
note "== done $(date +%T), $(($(date +%s) - T_START)) s in all"

# --- pack: one tar.gz (at most 16 MiB comes back per file); if too big, leave out the largest
# traces and say which.
TAR=$OUT/corpus.tar.gz
tar -C "$WORK" -czf "$TAR" corpus
if [ "$(stat -c %s "$TAR")" -gt 16000000 ]; then
  find "$C" -name '*.gtrace' -size +3M -printf '%s %p\n' | sort -n | tee "$C/left_out.txt" |
    sed 's/^/left out (too big): /' | tee -a "$SUMMARY"
  tar -C "$WORK" -czf "$TAR" --exclude-from=<(awk '{print $2}' "$C/left_out.txt" | sed "s|^$WORK/||") corpus
fi
cp "$SUMMARY" "$OUT/corpus.txt"
echo "$TAR: $(stat -c %s "$TAR") bytes" | tee -a "$OUT/corpus.txt"
