#!/usr/bin/env bash
# GPU evidence for the capture range (GPUTRACE_CAPTURE=profiler-api): ResNet-18 b4, 5 steps, then
# torch.cuda.profiler.start(), 3 steps, stop(), 4 steps. Recorded once with the capture range and
# once without (all 12 steps), each with the steps' kernel counts from torch.profiler-free NVTX
# ranges; gtrace_count.py counts the records of both. Writes $OUT/capture/.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/capture; mkdir -p "$O"
LIB=${GT_LIB:-$PWD/.devbin/lib/libgputrace.so}
cat >/tmp/capture_app.py <<'PY'
import torch, torchvision
dev = torch.device("cuda")
model = torchvision.models.resnet18().to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4, 3, 224, 224, device=dev)
y = torch.randint(0, 1000, (4,), device=dev)
def step():
    opt.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    torch.cuda.synchronize()
for _ in range(5): step()
torch.cuda.profiler.start()
for _ in range(3): step()
torch.cuda.profiler.stop()
for _ in range(4): step()
print("done")
PY
for mode in profiler-api all; do
  mkdir -p "$O/$mode"
  LD_PRELOAD=$LIB GPUTRACE_DIR=$O/$mode GPUTRACE_CAPTURE=$mode GPUTRACE_VERBOSE=1 \
    python3 /tmp/capture_app.py >"$O/$mode.log" 2>&1
  echo "$mode rc=$?"; grep -i "capture\|wrote" "$O/$mode.log" | head -5
  python3 tools/bench/gtrace_count.py "$O/$mode"/*.gtrace | tee "$O/$mode.counts.md"
done
