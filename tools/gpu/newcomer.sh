#!/usr/bin/env bash
# Issue 32 on the GPU machine: what a new user sees from `gputrace record`, checked line by line.
# Records, with the analyzer and library packed here (tools/gpu/pack_devbin.sh; carry .devbin) and
# the CUDA C samples built there (tools/gpu/build.sh):
#  - train.py (ResNet-18, 20 steps, --item-every-step: a sync at a known line of Python);
#  - the sync_every_iter sample (C, built RelWithDebInfo): its call site must be file:line
#    ("sync_every_iter.cu:NN in ..."), read from DWARF by libdw through the symbol archive;
#  - the launch_bound sample.
# For each: record's own output is the verdict and the advice in at most 40 lines of at most 100
# columns, naming NAME.report.txt, NAME.html and NAME.perfetto-trace, which exist; the full report
# has its tables, no mangled name ("_Z"), no "-0.0", no "~0.00", no count with ".0" before a noun
# of calls; the page holds its data. About 2 minutes.
# Results: $OUT/newcomer/summary.md (PASS/FAIL lines) and newcomer.tgz (what record printed, the
# reports, the pages).
#   tools/gpu/build.sh && tools/gpu/newcomer.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
O=$OUT/newcomer; W=$(mktemp -d); mkdir -p "$O"
. tools/gpu/devbin.sh
SAMPLES=$PWD/build-gpu/sample_apps
S=$O/summary.md
echo "# newcomer ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null))" >"$S"
pass() { echo "PASS $*" | tee -a "$S"; }
fail() { echo "FAIL $*" | tee -a "$S"; }
export COLUMNS=100

# record NAME CMD...: `gputrace record -o NAME` in $W; record's stdout+stderr in $W/NAME.printed
record() {
  local name=$1; shift
  (cd "$W" && timeout 300 "$GT" record -q --lib "$LIB" -o "$name" -- "$@") >"$W/$name.printed" 2>&1
  echo "## $name: rc $?, $(wc -l <"$W/$name.printed") lines printed" >>"$S"
}

check() { # NAME: record's output and files
  local name=$1 p=$W/$1.printed r=$W/$1.report.txt
  local lines width
  lines=$(wc -l <"$p")
  width=$(python3 -c 'import sys; print(max((len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8") if not l.startswith(("train.py:", "step times", "steady state:"))), default=0))' "$p")
  [ "$lines" -le 40 ] && [ "$width" -le 100 ] && pass "$name: record printed $lines lines, at most $width columns" ||
    fail "$name: record printed $lines lines, widest $width columns"
  # the program's own output and the recorder's exit line come first, then the verdict
  grep -q "^== verdict: " "$p" && ! grep -q "^== kernels ==" "$p" &&
    pass "$name: the verdict, no table of the full report" || fail "$name: $(head -3 "$p")"
  grep -q "full report  $name.report.txt" "$p" && grep -q "timeline     $name.perfetto-trace" "$p" &&
    [ -s "$r" ] && [ -s "$W/$name.html" ] && [ -s "$W/$name.perfetto-trace" ] &&
    pass "$name: report, page and timeline written where record says" || fail "$name: outputs missing: $(tail -3 "$p")"
  grep -q "^== kernels ==" "$r" && grep -q "^== cuDNN ==" "$r" && pass "$name: full report has its tables" ||
    fail "$name: full report: $(head -3 "$r")"
  local bad
  bad=$(grep -nE '_Z[A-Z0-9]|-0\.0+( |$)|~0\.00|[0-9]\.0 (blocking|calls|allocation|kernels)' "$r" "$p" | head -3)
  [ -z "$bad" ] && pass "$name: no mangled name, -0.0, ~0.00 or count with .0" || fail "$name: $bad"
  grep -q '<script id="gt-data" type="application/json">{' "$W/$name.html" && pass "$name: the page holds its data" ||
    fail "$name: the page"
}

if python3 -c 'import torch, torchvision; assert torch.cuda.is_available()' 2>/dev/null; then
  record train python3 "$PWD/sample_apps/train.py" --steps 20 --warmup 5 --item-every-step
  check train
  grep -q "at train.py:[0-9]* in main" "$W/train.printed" && pass "train: a call site in train.py" ||
    fail "train: no train.py call site in what record printed"
else
  fail "train: torch/torchvision not importable"
fi
if [ -x "$SAMPLES/sync_every_iter" ]; then
  record sync "$SAMPLES/sync_every_iter"
  check sync
  site=$(grep -oE "sync_every_iter\.cu:[0-9]+ in [A-Za-z_0-9:]+" "$W/sync.report.txt" | head -1)
  [ -n "$site" ] && pass "sync: the C call site as file:line ($site)" ||
    fail "sync: no file:line call site: $(grep -m3 -E 'sync_every_iter|\[sync' "$W/sync.report.txt")"
  record launch "$SAMPLES/launch_bound"
  check launch
else
  fail "samples missing: run tools/gpu/build.sh first"
fi
tar -czf "$O/newcomer.tgz" -C "$W" --exclude='*.gputrace' --exclude='*.perfetto-trace' . 2>/dev/null
cat "$S"
rm -rf "$W"
