#!/usr/bin/env bash
# GPU evidence for issue 33 item 0 (a long run's steps): a PyTorch training loop with no step
# marker (no NVTX range: the steps must come from the kernels' repeating pattern), long enough to
# pass the step finder's list of 4 M GPU operations, recorded with the library in .devbin
# (tools/gpu/pack_devbin.sh), then `report --json` with ours and, if LONG_BASELINE names an older
# analyzer, with it, each with its peak memory. The program prints its own median step time
# (CUDA events around the steady steps) to compare the report's with. Run from the repo root:
#   OUT=<folder> [LONG_BASELINE=<gputrace>] bash tools/gpu/long_pattern.sh [STEPS] [MODEL] [BATCH]
# Output: $OUT/long_pattern.txt, $OUT/long_pattern{,_base}.json.
set -uo pipefail
: "${OUT:?OUT must name the folder for results}"
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tools/gpu/devbin.sh
. tools/gpu/devbin.sh
STEPS=${1:-15000}
W=${LONG_WORK:-/tmp/gputrace-long-pattern}
rm -rf "$W" && mkdir -p "$W"
{
  t0=$(date +%s)
  GPUTRACE_DIR="$W" LD_PRELOAD="$LIB" timeout "${LONG_TRAIN_S:-300}" python3 - "$STEPS" "${2:-resnet18}" "${3:-4}" <<'PY'
import sys, torch, torchvision
steps, name, batch = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
model = getattr(torchvision.models, name)(num_classes=100).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(batch, 3, 224, 224, device="cuda")
y = torch.randint(0, 100, (batch,), device="cuda")
ev = [torch.cuda.Event(enable_timing=True) for _ in range(steps + 1)]
for i in range(steps):
    ev[i].record()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
ev[steps].record()
torch.cuda.synchronize()
ms = sorted(ev[i].elapsed_time(ev[i + 1]) for i in range(steps // 10, steps))
print("long_pattern: %s b%d, %d steps, own median step %.3f ms (steps %d on)" % (
    name, batch, steps, ms[len(ms) // 2], steps // 10))
PY
  echo "train rc=$? in $(($(date +%s) - t0)) s"
  T=$(ls -S "$W"/*.gtrace | head -1)
  echo "trace: $(stat -c %s "$T") bytes"
  "$GT" info "$T" | sed -n 1,12p
  for who in ours base; do
    bin=$GT json=$OUT/long_pattern.json
    if [ $who = base ]; then
      [ -n "${LONG_BASELINE:-}" ] || continue
      bin=$LONG_BASELINE json=$OUT/long_pattern_base.json
    fi
    /usr/bin/time -f "$who: peak %M KB, %e s" "$bin" report --json "$T" >"$json" 2>"$W/time.txt"
    tail -1 "$W/time.txt"
    python3 - "$json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
s = p["steps"]
print("  steps %s from %s; median %s ms, %s iterations a step; why: %s" % (
    s.get("count"), s.get("source"), s.get("median_ms"), s.get("iterations_per_step", 1),
    (s.get("step_why") or "")[:300]))
PY
  done
} 2>&1 | tee "$OUT/long_pattern.txt"
