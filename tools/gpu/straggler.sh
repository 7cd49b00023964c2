#!/usr/bin/env bash
# GPU evidence for issue 20/21 item 3 (where idle GPU time went, the straggler), on a 2-GPU machine
# (nvidia-h200-x2): DDP over NCCL (sample_apps/train.py, resnet18) recorded with `gputrace
# record`, once with rank 1 doing 15 ms more CPU work a step and once without; the analyzer
# travels in .devbin (tools/gpu/pack_devbin.sh here, carry .devbin). For each run it keeps the
# report (text and JSON) and a summary line: the straggler advice's rank and lateness per step,
# and each rank's steady idle by cause. Expect with --straggler-ms 15: straggler rank 1,
# lateness within 20% of 15 ms, rank 0's largest cause "collective" (its NCCL kernels spin for
# rank 1), not data_loading; without: no straggler. Output: $OUT/straggler.tar.gz (reports,
# summary.txt) and $OUT/straggler_traces.tar.xz (the slow run, for tests/data/corpus).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
R="$OUT/straggler"; mkdir -p "$R"
G=$PWD/.devbin/bin/gputrace
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
TRAIN=(sample_apps/train.py --model resnet18 --batch-size 64 --steps 60 --warmup 10)
for ms in 15 0; do
  name=nccl_slow$ms
  ( cd "$R" && timeout 240 "$G" record -o "$name" -- torchrun --standalone --nproc_per_node=2 \
      "$OLDPWD/${TRAIN[0]}" "${TRAIN[@]:1}" --straggler-ms "$ms" ) >"$R/$name.record.txt" 2>&1
  echo "record rc=$?" >>"$R/$name.record.txt"
  "$G" report "$R/$name" >"$R/$name.report.txt" 2>&1
  "$G" report --json "$R/$name" >"$R/$name.report.json" 2>"$R/$name.report.err"
  python3 - "$R/$name.report.json" "$ms" >>"$R/summary.txt" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = [a for a in d["advice"] if a["id"] == "straggler"]
line = f"injected {sys.argv[2]} ms: "
line += (f"straggler rank {s[0]['rank']} late {s[0]['evidence'].get('lateness_ms_per_step')} ms/step"
         if s else "no straggler")
for p in d["processes"]:
    if p.get("rank", -1) >= 0 and p["kernels"]["count"]:
        c = p["gpu"]["idle_by_cause"]
        top = max(c, key=lambda k: c[k]["steady_pct"] if k != "cuda_call" else -1)
        line += f"; rank {p['rank']} idle top {top} " + ", ".join(
            f"{k} {v['steady_ms_per_step']:.2f}" for k, v in c.items() if v["steady_ms_per_step"])
print(line)
PY
  rm -f "$R/$name"/*.gtrace.tmp
done
cat "$R/summary.txt"
# reports and summary; the slow run's traces apart (may exceed the 16 MiB a file can bring back)
tar -C "$OUT" --exclude='*.gtrace' -czf "$OUT/straggler.tar.gz" straggler
tar -C "$R" -cJf "$OUT/straggler_traces.tar.xz" nccl_slow15 && rm -rf "$R"
