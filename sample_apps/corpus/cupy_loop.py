#!/usr/bin/env python3
"""Corpus: an array-library program (CuPy) — conjugate gradient on a 2-D Poisson problem.

Style: plain CuPy, no framework and no NVTX ranges of its own. CuPy launches its kernels through
the CUDA driver API (cuLaunchKernel), not the runtime; its full reductions go through CUB
(CUPY_ACCELERATORS=cub), which marks each call with an NVTX range such as
"cub::DeviceReduce::Sum" — several per iteration. Each iteration checks convergence with
float(rr): a device-to-host copy that waits for the GPU, the loop's only sync.

What a correct diagnosis says:
  - steps: the --steps CG iterations (default 300), one per float(rr) sync; the CUB NVTX ranges
    are library calls inside a step, not steps;
  - per step about 15 small kernels (5-point stencil, axpy, products, two CUB reductions) on a
    2048x2048 float32 grid, each a few microseconds of GPU time: the GPU waits on the CPU's
    launches and on the sync every iteration (launch-bound, with a sync-stall at the float(rr)
    line); advice: check convergence every k iterations, fuse the element-wise work
    (cupy.fuse / ElementwiseKernel), or solve a bigger problem per launch.

    gputrace record -o cupy_loop -- python sample_apps/corpus/cupy_loop.py

Prints its own timing last: CORPUS name=cupy_loop steps=... step_ms_median=... (per-step intervals,
each ending at the float(rr) sync, so step_ms_median is the real step period).
"""
import os
import time

from corpus_common import report  # the CORPUS line; its clock starts here
os.environ.setdefault("CUPY_ACCELERATORS", "cub")

import argparse  # noqa: E402
import sys  # noqa: E402


def laplacian(cp, p):
    """5-point stencil with zero boundary, written the NumPy way (one kernel per line)."""
    ap = 4.0 * p
    ap[1:, :] -= p[:-1, :]
    ap[:-1, :] -= p[1:, :]
    ap[:, 1:] -= p[:, :-1]
    ap[:, :-1] -= p[:, 1:]
    return ap


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2048, help="grid side (default 2048)")
    ap.add_argument("--steps", type=int, default=300, help="CG iterations")
    ap.add_argument("--warmup", type=int, default=5, help="iterations left out of the timing")
    args = ap.parse_args(argv)
    try:
        import cupy as cp
    except ImportError as e:
        print("cupy_loop.py needs cupy: %s" % e, file=sys.stderr)
        return 2

    rng = cp.random.default_rng(0)
    b = rng.standard_normal((args.n, args.n), dtype=cp.float32)
    x = cp.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rr = cp.sum(r * r)
    step_ends = []
    t_prev = time.perf_counter()
    durations = []
    for it in range(args.steps):
        ap_ = laplacian(cp, p)
        alpha = rr / cp.sum(p * ap_)
        x += alpha * p
        r -= alpha * ap_
        rr_new = cp.sum(r * r)
        if float(rr_new) < 1e-12:  # the convergence check: waits for the GPU every iteration
            break
        p = r + (rr_new / rr) * p
        rr = rr_new
        t = time.perf_counter()
        durations.append((t - t_prev) * 1e3)
        step_ends.append(t)
        t_prev = t
    cp.cuda.Device().synchronize()
    t_end = time.perf_counter()
    report("cupy_loop", args.warmup, durations, step_ends, t_end, "step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
