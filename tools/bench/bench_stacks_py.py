"""Cost of the Python frames of one call-site capture (issue 8), goal <= 1 us.

  LD_PRELOAD=build/lib/libgputrace.so GPUTRACE_DIR=/tmp python3 tools/bench/bench_stacks_py.py

Calls gt_stack_capture through ctypes from a Python stack 12 frames deep: through ctypes.PyDLL (the
GIL stays held: the C API reader) and ctypes.CDLL (the GIL is released, as PyTorch does: the
direct reader), each with GPUTRACE_STACK_PYTHON=1 and =0 in child processes; the difference is
the cost of reading the Python frames. A run with GPUTRACE_STACKS=off gives the ctypes call."""
import ctypes
import os
import subprocess
import sys
import time

N = 100000


def bench(lib):
    f = lib(None).gt_stack_capture
    f.restype, f.argtypes = ctypes.c_uint32, [ctypes.c_int]

    def nest(n):
        if n:
            return nest(n - 1)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter_ns()
            for _ in range(N):
                f(1)
            best = min(best, time.perf_counter_ns() - t0)
        return best / N

    nest(11)
    print(f"{nest(11):.0f}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        bench(ctypes.PyDLL if sys.argv[1] == "gil" else ctypes.CDLL)
        sys.exit(0)
    for mode in ("gil", "nogil"):
        results = {}
        for label, env in (("off", {"GPUTRACE_STACKS": "off"}),
                           ("native only", {"GPUTRACE_STACK_PYTHON": "0"}),
                           ("native + Python", {"GPUTRACE_STACK_PYTHON": "1"})):
            e = dict(os.environ, **env)
            out = subprocess.run([sys.executable, __file__, mode], env=e, capture_output=True,
                                 text=True, check=True).stdout
            results[label] = float(out.split()[-1])
            print(f"bench_stacks_py: {mode}: {label}: {results[label]:.0f} ns per ctypes call")
        print(f"bench_stacks_py: {mode}: Python frames (15 frames): "
              f"{results['native + Python'] - results['native only']:.0f} ns per capture")
