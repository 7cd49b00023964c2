#!/usr/bin/env bash
# Issue 18, sampled GPU tracing, analysis side, on the GPU machine: the same PyTorch ResNet-18 b4
# loop (600 steps, a few seconds) recorded in full and with GPUTRACE_SAMPLE=1/3 (CUPTI's records
# 1 s of every 4, about a quarter of the run). The sampled report must read like the full one:
# its verdict names the windows, the steady GPU busy share within 5 points of the full run's (not
# a quarter of it: time between windows is no idle), no gpu-idle/launch-bound advice the full run
# has not, and the extrapolated kernel count within 25% of the full run's. Uses the analyzer and
# libgputrace.so packed here (tools/gpu/pack_devbin.sh; carry .devbin). About 1 minute.
# Results: $OUT/sampled/summary.md (PASS/FAIL lines), the reports and traces in sampled.tgz.
#   tools/gpu/sampled_report.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/sampled; W=$(mktemp -d); mkdir -p "$O"
. tools/gpu/devbin.sh
S=$O/summary.md
echo "# sampled report ($(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null))" >"$S"
pass() { echo "PASS $*" | tee -a "$S"; }
fail() { echo "FAIL $*" | tee -a "$S"; }

# run NAME VAR=VALUE...: the loop traced, trace in $W/NAME/, its report in $W/NAME.{txt,json}
run() {
  local name=$1; shift
  mkdir -p "$W/$name"
  env LD_PRELOAD="$LIB" GPUTRACE_DIR="$W/$name" "$@" \
    timeout 300 python3 tools/gpu/overhead_modes.py plain --steps 600 >"$W/$name.out" 2>"$W/$name.err"
  echo "## $name: rc $?, $(grep STEP_MS "$W/$name.out")" >>"$S"
  GPUTRACE_PEAKS=off "$GT" report "$W/$name" >"$W/$name.txt" 2>&1
  GPUTRACE_PEAKS=off "$GT" report --json "$W/$name" >"$W/$name.json" 2>/dev/null
  sed -n '1,9p' "$W/$name.txt" >>"$S"
}
run full
run sample GPUTRACE_SAMPLE=1/3

grep -q "^  sampled      GPU figures from [0-9]* sampled windows covering" "$W/sample.txt" &&
  pass "the verdict names the windows: $(grep -m1 '^  sampled      ' "$W/sample.txt")" ||
  fail "no windows in the verdict: $(head -6 "$W/sample.txt")"
read -r FULL_BUSY SAMPLE_BUSY FULL_K SAMPLE_K SAMPLE_ADV FULL_ADV < <(python3 - "$W/full.json" "$W/sample.json" <<'EOF'
import json, sys
def load(p):
    d = json.load(open(p))
    proc = max(d["processes"], key=lambda q: q.get("gpu", {}).get("busy_ms", 0))
    return d, proc
f, fp = load(sys.argv[1]); s, sp = load(sys.argv[2])
est = sp.get("gpu_sampling", {}).get("estimated_run_totals", {}).get("kernel_count", -1)
ids = lambda d: ",".join(sorted(a["id"] for a in d["advice"] if a["id"] in ("gpu-idle", "launch-bound"))) or "-"
print(fp["gpu"]["steady_busy_pct"], sp["gpu"]["steady_busy_pct"], fp["kernels"]["count"], round(est), ids(s), ids(f))
EOF
)
python3 -c "import sys; sys.exit(abs($FULL_BUSY - $SAMPLE_BUSY) > 5)" &&
  pass "steady GPU busy: sampled $SAMPLE_BUSY%, full $FULL_BUSY%" ||
  fail "steady GPU busy: sampled $SAMPLE_BUSY%, full $FULL_BUSY%"
python3 -c "import sys; sys.exit(not (0.75 * $FULL_K <= $SAMPLE_K <= 1.25 * $FULL_K))" &&
  pass "kernels: ≈ $SAMPLE_K extrapolated, $FULL_K in full" ||
  fail "kernels: ≈ $SAMPLE_K extrapolated, $FULL_K in full"
[ "$SAMPLE_ADV" = "$FULL_ADV" ] || [ "$SAMPLE_ADV" = "-" ] &&
  pass "GPU-idle advice: sampled '$SAMPLE_ADV', full '$FULL_ADV'" ||
  fail "GPU-idle advice from un-recorded time: sampled '$SAMPLE_ADV', full '$FULL_ADV'"

cp "$W/full.txt" "$W/sample.txt" "$O/"
tar czf "$O/sampled.tgz" -C "$W" . 2>/dev/null
cat "$S"
