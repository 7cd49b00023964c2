#!/usr/bin/env python3
"""Corpus: a loop of tiny kernels — 3,000 launches of a kernel of about a microsecond — through
Triton's launcher or CuPy's RawKernel (the driver API, cuLaunchKernel), at two step lengths
(issue 30: launch-bound at any step length, whatever the launch path). The runtime path (<<<>>>)
is sample_apps/tiny_launches.cu, the same loop in CUDA C.

Style: one kernel adding 1 to --n floats (one block's worth), launched from a plain Python loop.
  --per-step 1   no sync in the loop (one after the --warmup steps, one at the end): each launch
                 is a step, as in a loop that only launches;
  --per-step K   K launches, then one value read back (a sync): a step is K launches.
The Triton path compiles at the first launch (a fresh TRITON_CACHE_DIR unless set: ptxas and gcc
children); the CuPy path compiles its kernel with NVRTC (CuPy's disk cache) and imports neither
PyTorch nor Triton.

    python tiny_launches.py --path triton --per-step 1
    python tiny_launches.py --path cupy --per-step 100

What a correct diagnosis says:
  - steps: --launches / --per-step, the step as the program's clock (step_ms_median with a sync
    each step, step_ms_wall for --per-step 1);
  - each kernel runs about a microsecond while the CPU spends tens of microseconds per launch
    (us_per_launch in the CORPUS line): the GPU idles between short kernels while the CPU
    prepares the next launch — launch-bound, at a step of 1 launch and at a step of 100, through
    Triton's launcher (cuLaunchKernelEx) and CuPy's (cuLaunchKernel) alike; remedies in the
    program's terms (more work per launch, fusing the loop into one kernel, a CUDA graph:
    torch.cuda.graphs for the Triton path, cupy.cuda.Graph / stream capture for CuPy);
  - start-up: the Triton path's JIT compilation, not data loading.

Prints its own timing last: CORPUS name=tiny_launches ... path=... per_step=K us_per_launch=...
"""
import argparse
import sys
import time

from corpus_common import StepClock, fresh_cache_dirs, remove_dirs

ADD_ONE = r"""
extern "C" __global__ void add_one(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += 1.0f;
}
"""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--path", choices=("triton", "cupy"), default="triton")
    p.add_argument("--launches", type=int, default=3000)
    p.add_argument("--per-step", type=int, default=1, help="launches per step")
    p.add_argument("--n", type=int, default=1024, help="floats the kernel updates")
    p.add_argument("--warmup", type=int, default=0, help="steps left out (0: 10 launches' worth)")
    return p.parse_args(argv)


def triton_path(n):
    """(launch, read one value back, sync, cleanup) through Triton on a PyTorch tensor."""
    made = fresh_cache_dirs("TRITON_CACHE_DIR")  # a first run's empty cache
    import torch
    import tiny_triton_kernel

    y = torch.zeros(n, device="cuda")
    return (lambda: tiny_triton_kernel.launch(y, n), lambda: y[0].item(),
            torch.cuda.synchronize, lambda: remove_dirs(made))


def cupy_path(n):
    """(launch, read one value back, sync, cleanup) through a CuPy RawKernel."""
    import cupy as cp

    kernel = cp.RawKernel(ADD_ONE, "add_one")
    y = cp.zeros(n, dtype=cp.float32)
    threads = 256
    blocks = (n + threads - 1) // threads
    n32 = cp.int32(n)
    return (lambda: kernel((blocks,), (threads,), (y, n32)), lambda: float(y[0]),
            cp.cuda.Device().synchronize, lambda: None)


def main(argv=None):
    args = parse_args(argv)
    try:
        launch, read, sync, cleanup = (triton_path if args.path == "triton" else cupy_path)(args.n)
    except ImportError as e:
        print("tiny_launches.py --path %s: %s" % (args.path, e), file=sys.stderr)
        return 2
    k = max(1, args.per_step)
    steps = args.launches // k
    warmup = args.warmup or max(1, 10 // k)
    clock = StepClock()
    value = 0.0
    for s in range(steps):
        for _ in range(k):
            launch()
        if k > 1:
            value = read()  # one value back: the step's sync
        if s + 1 == warmup:
            sync()  # the timed steps start on an empty queue
        clock.tick()
    sync()
    t_end = time.perf_counter()
    cleanup()
    steady = clock.durations[warmup:]
    us = (t_end - clock.step_ends[warmup - 1]) * 1e6 / (len(steady) * k) if steady else 0.0
    clock.report("tiny_launches", warmup, t_end, "step" if k > 1 else "end",
                 " path=%s per_step=%d launches=%d us_per_launch=%.2f first_step_s=%.2f "
                 "check=%.6g" % (args.path, k, steps * k, us, clock.durations[0] / 1e3, value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
