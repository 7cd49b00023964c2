#!/bin/sh
# xrank_bench.sh — the cross-rank analysis at scale (issue 33 item 3): N synthetic per-rank
# summaries (tools/gen_summaries.py, 100 steps of 8 NCCL collectives, one rank late every step)
# analysed by one `gputrace report --json` pinned to one core; prints the time, the peak memory
# (/usr/bin/time's %M) and whether the injected straggler was named. Figures: docs/performance.md.
#
#   tools/bench/xrank_bench.sh GPUTRACE [RANKS] [WORKDIR]     (RANKS default 1024)
# Exit status 1 when the straggler named is not the injected one, or over 10 s or 256 MB.
set -eu
gputrace=$1
ranks=${2:-1024}
work=${3:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$work/summaries"
python3 "$here/gen_summaries.py" "$work/summaries" --ranks "$ranks" --steps 100 \
    --collectives 8 --scenario rank --seed 7
bytes=$(cat "$work"/summaries/rank*.summary.json | wc -c)
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
/usr/bin/time -f "%e %M" -o "$work/time.txt" $pin "$gputrace" report --json "$work/summaries" \
    >"$work/report.json"
read -r secs kb <"$work/time.txt"
python3 - "$work" "$secs" "$kb" "$bytes" <<'PY'
import json, sys
work, secs, kb, size = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rep = json.load(open(work + "/report.json"))
truth = json.load(open(work + "/summaries/truth.json"))
want = truth["follows"]["rank"]
st = rep["straggler"] or {}
named = [s["rank"] for s in rep["steps"]]
right = sum(1 for s, t in zip(rep["steps"], truth["steps"]) if s["rank"] == t["rank"])
print("ranks %d, summaries %.1f MB (%.1f KB a rank), %.2f s, peak %.0f MB; straggler rank %s "
      "(injected %d), follows %s, steps right %d of %d" % (
          rep["rank_count"], size / 1e6, size / 1e3 / rep["rank_count"], secs, kb / 1024,
          st.get("rank"), want, rep["follows"]["what"], right, len(truth["steps"])))
ok = st.get("rank") == want and right == len(truth["steps"]) and secs <= 10 and kb <= 256 * 1024
sys.exit(0 if ok else 1)
PY
