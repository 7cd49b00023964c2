"""Cost of the Python frames of one call-site capture (issue 8), goal <= 1 us.

  LD_PRELOAD=build/lib/libgputrace.so GPUTRACE_DIR=/tmp python3 tools/bench/bench_stacks_py.py

Calls gt_stack_capture through ctypes.PyDLL (the GIL stays held, so Python frames are read) from
a Python stack 12 frames deep, with GPUTRACE_STACK_PYTHON=1 and =0 in two child processes; the
difference is the cost of reading the Python frames. A run with GPUTRACE_STACKS=off gives the
ctypes call itself."""
import ctypes
import os
import subprocess
import sys
import time

N = 100000


def bench():
    f = ctypes.PyDLL(None).gt_stack_capture
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
        bench()
        sys.exit(0)
    results = {}
    for label, env in (("off", {"GPUTRACE_STACKS": "off"}),
                       ("native only", {"GPUTRACE_STACK_PYTHON": "0"}),
                       ("native + Python", {"GPUTRACE_STACK_PYTHON": "1"})):
        e = dict(os.environ, **env)
        out = subprocess.run([sys.executable, __file__, "child"], env=e, capture_output=True,
                             text=True, check=True).stdout
        results[label] = float(out.split()[-1])
        print(f"bench_stacks_py: {label}: {results[label]:.0f} ns per ctypes call")
    print(f"bench_stacks_py: Python frames (12 deep + the ctypes frames): "
          f"{results['native + Python'] - results['native only']:.0f} ns per capture")
