#!/usr/bin/env python3
"""Corpus: one Triton kernel launched --steps times (default 3000), JIT-compiled at start.

Style: a hand-written Triton kernel (y = a*x + b*y on 1M floats) on PyTorch tensors, launched from
a plain Python loop with no NVTX and no sync in the loop (one after the --warmup launches, so the
timing starts on an empty queue, and one at the end). The Triton cache is a
fresh folder (TRITON_CACHE_DIR, unless set), as on a first run: the first launch compiles —
Triton runs ptxas, and gcc for its launcher stub, as child processes — for a few seconds.

What a correct diagnosis says:
  - start-up: the first seconds are JIT compilation (Triton, with ptxas/gcc child processes), not
    data loading and not the GPU;
  - steps: 3000, one launch of the same kernel each (a loop of one kernel is a loop of steps);
  - each kernel runs a few microseconds while each launch costs the CPU tens of microseconds
    (Python + Triton's launcher): the GPU is mostly idle between kernels — launch-bound; advice:
    more work per launch (bigger blocks, fusing iterations) or a CUDA graph.

    gputrace record -o triton_loop -- python sample_apps/corpus/triton_loop.py

Prints its own timing last: CORPUS name=triton_loop ... sync=end (the loop never syncs, so the
steady period is step_ms_wall, measured up to the final synchronize).
"""
import time

from corpus_common import fresh_cache_dirs, remove_dirs, report  # its clock starts here

import argparse  # noqa: E402
import sys  # noqa: E402

MADE_DIRS = fresh_cache_dirs("TRITON_CACHE_DIR")  # a first run's empty cache

try:  # module level: Triton reads the kernel's source and its globals (tl)
    import torch
    import triton
    import triton.language as tl

    IMPORT_ERROR = None
except ImportError as e:  # reported by main()
    torch = triton = tl = None
    IMPORT_ERROR = e

if triton is not None:

    @triton.jit
    def axpby_kernel(x_ptr, y_ptr, a, b, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, a * x + b * y, mask=mask)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1 << 20, help="elements per vector")
    p.add_argument("--steps", type=int, default=3000, help="kernel launches")
    p.add_argument("--warmup", type=int, default=10, help="launches left out of the timing")
    args = p.parse_args(argv)
    if triton is None:
        print("triton_loop.py needs torch and triton: %s" % IMPORT_ERROR, file=sys.stderr)
        return 2

    x = torch.randn(args.n, device="cuda")
    y = torch.zeros(args.n, device="cuda")
    block = 1024
    grid = (triton.cdiv(args.n, block),)
    durations, step_ends = [], []
    t_prev = time.perf_counter()
    for _ in range(args.steps):
        axpby_kernel[grid](x, y, 0.5, 0.5, args.n, BLOCK=block)
        if len(durations) + 1 == args.warmup:
            torch.cuda.synchronize()  # the timed launches start on an empty queue
        t = time.perf_counter()
        durations.append((t - t_prev) * 1e3)
        step_ends.append(t)
        t_prev = t
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    remove_dirs(MADE_DIRS)
    report("triton_loop", args.warmup, durations, step_ends, t_end, "end",
           " first_launch_s=%.2f" % (durations[0] / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
