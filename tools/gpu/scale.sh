#!/usr/bin/env bash
# GPU evidence for issue 33 (scale), with the analyzer and library carried in .devbin
# (tools/gpu/pack_devbin.sh): run from the repo root on the GPU machine as
#   OUT=<folder> bash tools/gpu/scale.sh ranks|long [STEPS]
# ranks: 4 DDP ranks over gloo on the one GPU (sample_apps/corpus/ddp_straggler.py, conv, rank 2
#        busy 20 ms before each forward, 40 steps); a summary per rank (`report --summary`), the
#        cross-rank report from the summaries against the report of the traces, and
#        `convert --ranks slowest,fastest`. Output: $OUT/scale_ranks.txt, $OUT/ranks.tar.xz.
# long:  train.py ResNet-18 batch 4 for STEPS steps (default 15000: a trace of about 1 GB;
#        SCALE_MODEL and SCALE_BATCH name another model and batch, SCALE_TRAIN_S its time limit,
#        default 400 s), then
#        the peak memory (max RSS) and time of report, convert (with advice, and --no-advice),
#        diff of the trace against itself and report --summary (SCALE_MEASURE: which of
#        "report summary convert noadvice diff", default all). Output: $OUT/scale_long.txt.
#        SCALE_BASELINE=<an older gputrace>: each measured command is also run with it, right
#        after ours on the same trace, so that before and after come from one run. Ours prints
#        what its model holds by structure (GPUTRACE_MEMORY_STATS). SCALE_JSON=1: the report's
#        --json, ours (and the baseline's), in $OUT/long_report.json (long_report_base.json).
set -uo pipefail
: "${OUT:?OUT must name the folder for results}"
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tools/gpu/devbin.sh
. tools/gpu/devbin.sh
PY=${PYTHON:-python3}
W=${SCALE_WORK:-/tmp/gputrace-scale}
mkdir -p "$W"

# peak LABEL CMD...: the command's max RSS and wall time, its last output lines
peak() {
  local label=$1
  shift
  "$PY" - "$@" <<'EOF' >"$W/peak.txt" 2>&1
import resource, subprocess, sys, time
t0 = time.time()
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("rc=%d peak_kb=%d wall_s=%.1f" % (r.returncode, kb, time.time() - t0))
lines = r.stdout.splitlines()
stats = ("gputrace: memory after", "  links ", "  gaps ", "  steady log ")
print("\n".join([l for l in lines if l.startswith(stats)] + [l for l in lines if not l.startswith(stats)][-4:]))
EOF
  echo "== $label: $(head -1 "$W/peak.txt")"
  tail -n +2 "$W/peak.txt" | cut -c1-300 | sed 's/^/   /'
}

case "${1:-}" in
ranks)
  R=$W/ranks
  rm -rf "$R" && mkdir -p "$R/run"
  GPUTRACE_DIR="$R/run" LD_PRELOAD="$LIB" timeout 300 "$PY" -m torch.distributed.run --standalone \
    --nproc_per_node=4 sample_apps/corpus/ddp_straggler.py --model conv --delay-where forward \
    --delay-kind busy --delay-rank 2 --delay-ms 20 --steps 40 >"$R/program.txt" 2>&1
  echo "ddp rc=$? $(ls "$R/run" | tr '\n' ' ')"
  grep CORPUS "$R/program.txt"
  for f in "$R"/run/*.gtrace; do
    "$GT" report --summary -o "${f%.gtrace}.summary.json" "$f" || echo "summary of $f failed"
  done
  mkdir -p "$R/sum" && mv "$R"/run/*.summary.json "$R/sum/"
  ls -l "$R/sum"
  "$GT" report --json "$R/run" >"$R/traces.json" 2>"$R/traces.err"
  "$GT" report --json "$R/sum" >"$R/summaries.json" 2>"$R/summaries.err"
  "$GT" report "$R/sum" >"$R/summaries.txt" 2>&1
  "$PY" - "$R" <<'EOF'
import json, sys
r = sys.argv[1]
t = json.load(open(r + "/traces.json"))
s = json.load(open(r + "/summaries.json"))
print("traces' straggler:", json.dumps(t.get("straggler") or t.get("run", {}).get("straggler")))
print("summaries' straggler:", json.dumps(s.get("straggler")))
print("summaries' follows:", json.dumps(s.get("follows")))
EOF
  sed -n 1,40p "$R/summaries.txt"
  peak "convert --ranks slowest,fastest" "$GT" convert --ranks slowest,fastest -o "$R/two.pftrace" "$R/run"
  ls -l "$R/two.pftrace"
  tar -C "$W" -cJf "$OUT/ranks.tar.xz" ranks
  ;;
long)
  STEPS=${2:-15000}
  L=$W/long
  rm -rf "$L" && mkdir -p "$L"
  t0=$(date +%s)
  GPUTRACE_DIR="$L" LD_PRELOAD="$LIB" timeout "${SCALE_TRAIN_S:-400}" "$PY" sample_apps/train.py \
    --model "${SCALE_MODEL:-resnet18}" --batch-size "${SCALE_BATCH:-4}" --steps "$STEPS" \
    >"$L/program.txt" 2>&1
  echo "train rc=$? in $(($(date +%s) - t0)) s: $(grep -c . "$L/program.txt") lines"
  T=$(ls -S "$L"/*.gtrace | head -1)
  echo "trace: $(stat -c %s "$T") bytes"
  "$GT" info "$T" | head -12
  want() { [[ " ${SCALE_MEASURE:-report summary convert noadvice diff} " == *" $1 "* ]]; }
  # both LABEL ARGS...: ours, then the baseline's when one is named
  both() {
    local label=$1
    shift
    GPUTRACE_MEMORY_STATS=1 peak "$label" "$GT" "$@"
    [ -z "${SCALE_BASELINE:-}" ] || peak "$label, baseline" "$SCALE_BASELINE" "$@"
  }
  want report && both "report" report "$T"
  want summary && both "report --summary" report --summary -o "$L/summary.json" "$T"
  want convert && both "convert (default)" convert -o "$L/out.pftrace" "$T"
  want noadvice && both "convert --no-advice" convert --no-advice -o "$L/out2.pftrace" "$T"
  want diff && both "diff (itself)" diff "$T" "$T"
  if [ -n "${SCALE_JSON:-}" ]; then
    "$GT" report --json "$T" >"$OUT/long_report.json" 2>/dev/null
    [ -z "${SCALE_BASELINE:-}" ] || "$SCALE_BASELINE" report --json "$T" >"$OUT/long_report_base.json" 2>/dev/null
  fi
  ;;
*)
  echo "usage: OUT=<folder> tools/gpu/scale.sh ranks|long [STEPS]" >&2
  exit 2
  ;;
esac 2>&1 | tee "$OUT/scale_${1:-usage}.txt"
