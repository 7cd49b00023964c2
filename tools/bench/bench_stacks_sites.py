"""Cost of call-site capture with many distinct call sites (issue 4, issue 8): a PyTorch training
step captures about 250 stacks per step from ~250 different places, 20-40 Python frames deep, with
the GIL released. The single-line loop of bench_stacks_py.py hits every cache; this one does not.

  LD_PRELOAD=build/lib/libgputrace.so GPUTRACE_DIR=/tmp \
    LD_LIBRARY_PATH=build/tests/fakes/lib python3 tools/bench/bench_stacks_sites.py [SITES] [DEPTH]

Generates SITES chains of DEPTH nested Python functions, then calls cudaStreamSynchronize of the (fake) runtime through
ctypes.CDLL (GIL released, as PyTorch does) from each in turn, "steps" times. Prints ns per call;
run once with GPUTRACE_STACKS=off and once with the default to get the cost of a capture."""
import ctypes
import os
import sys
import tempfile
import time

SITES = int(sys.argv[1]) if len(sys.argv) > 1 else 250
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 24
STEPS = int(os.environ.get("BENCH_STEPS", "200"))

sync = ctypes.CDLL("libcudart.so.13").cudaStreamSynchronize
sync.restype, sync.argtypes = ctypes.c_int, [ctypes.c_void_p]

# Each site has its own chain of DEPTH small functions, so every frame's code and line differ per
# site (as the forward() calls of a model's modules do).
lines = []
for i in range(SITES):
    lines.append("def f0_%d(): return sync(None)\n" % i)
    for d in range(1, DEPTH):
        lines.append("def f%d_%d(): return f%d_%d()\n" % (d, i, d - 1, i))
src = "".join(lines)
path = os.path.join(tempfile.gettempdir(), "bench_sites_gen_%d.py" % os.getpid())
with open(path, "w") as f:
    f.write(src)
ns = {"sync": sync}
exec(compile(src, path, "exec"), ns)
tops = [ns["f%d_%d" % (DEPTH - 1, i)] for i in range(SITES)]
os.unlink(path)

for i in range(SITES):  # warm: the first capture of each stack writes its record
    tops[i]()
best = float("inf")
for _ in range(3):
    t0 = time.perf_counter_ns()
    for _ in range(STEPS // 3 or 1):
        for i in range(SITES):
            tops[i]()
    best = min(best, (time.perf_counter_ns() - t0) / ((STEPS // 3 or 1) * SITES))
print("%.0f" % best)
