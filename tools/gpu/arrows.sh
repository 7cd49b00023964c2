#!/usr/bin/env bash
# GPU evidence for issue 17 (one link rule, arrows with both ends): record the two loops whose
# Perfetto output lost its arrows on the H200 (a Triton kernel loop: 4 arrows for 3,003 linked
# kernels; a CuPy loop: 0 of 200, 401 flow ends that never started) with the library built by
# tools/gpu/build.sh, in the default link mode and with a callback pair on every launch.
# Output: $OUT/arrows.tar.gz (the .gtrace files). Check them on a machine with the analyzer:
#   for f in arrows/*/*.gtrace; do gputrace convert -o $f.pftrace $f;
#     python3 tests/analyzer/test_convert_check.py analyzer/convert/perfetto_trimmed.proto $f.pftrace; done
# Every output must pass (no flow end without a start, no start without an end), and the "N
# flows" of convert's summary must be at least the report's linked_by_* sum for the kernels.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
[ -e build-gpu/lib/libgputrace.so ] || tools/gpu/build.sh || exit 1
LIB=$PWD/build-gpu/lib/libgputrace.so
W=$(mktemp -d); mkdir -p "$W/arrows"
cat >"$W/triton_loop.py" <<'PY'
import torch, triton, triton.language as tl
@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)
x = torch.randn(1 << 16, device='cuda'); y = torch.randn_like(x); o = torch.empty_like(x)
for _ in range(3000):
    add[(64,)](x, y, o, x.numel(), BLOCK=1024)
torch.cuda.synchronize(); print('triton loop done')
PY
cat >"$W/cupy_loop.py" <<'PY'
import cupy as cp
a = cp.arange(1 << 16, dtype=cp.float32)
for _ in range(200):
    a = a * 1.0001 + 1.0
cp.cuda.runtime.deviceSynchronize(); print('cupy loop done', float(a[0]))
PY
for mode in order callbacks; do
  for app in triton_loop cupy_loop; do
    d="$W/arrows/$mode/$app"; mkdir -p "$d"
    cb=auto; [ "$mode" = callbacks ] && cb=1
    GPUTRACE_DIR="$d" GPUTRACE_CUPTI_LINK=$mode GPUTRACE_CUPTI_CALLBACKS=$cb LD_PRELOAD="$LIB" \
      timeout 300 python3 "$W/$app.py" >"$d/run.txt" 2>&1
    echo "$mode $app rc=$? $(ls "$d" | tr '\n' ' ')"
  done
done
tar -C "$W" -czf "$OUT/arrows.tar.gz" arrows && ls -la "$OUT/arrows.tar.gz"
