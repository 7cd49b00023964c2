#!/usr/bin/env python3
"""Corpus: a CuPy loop of matmuls (cuBLAS) and element-wise work — the kernels of calls no
runtime wrapper sees unless cuBLAS is wrapped (issue 30), and fp32 GEMMs in CuPy's terms
(issue 29: remedies in the program's own framework).

Style: plain CuPy, a power-iteration-like loop: each step multiplies --n x --n matrices
(--matmuls of them, cuBLAS GEMMs through cupy.matmul), normalizes with element-wise kernels and
a reduction, and reads the norm back (float(): a sync each step). CuPy launches its own kernels
through the driver API (cuLaunchKernel) and calls cuBLAS for the matmuls (cublasSgemmEx /
cublasGemmEx with CuPy's compute type: CUPY_TF32=1 makes fp32 GEMMs use TF32 tensor cores).

    python cupy_matmul.py --n 512                   # short steps: launches and the sync
    python cupy_matmul.py --n 4096                  # fp32 GEMMs most of each step
    CUPY_TF32=1 python cupy_matmul.py --n 4096      # TF32 already on

What a correct diagnosis says:
  - steps: --steps, one per float() sync, the step as the program's clock;
  - every kernel leads to a call with a call site in this file: CuPy's element-wise kernels to
    cuLaunchKernel, the GEMM kernels to the cuBLAS call that launched them;
  - --n 4096 fp32: the GEMMs are most of each step; the lower-precision advice is worded for
    CuPy (CUPY_TF32=1, or float16/bfloat16 arrays), by the GEMMs' measured share;
    with CUPY_TF32=1: not advised again (already on);
  - --n 512: short kernels and a sync each step (launch-bound / sync), no precision advice worth
    listing.

Prints its own timing last: CORPUS name=cupy_matmul ... n=... tf32=0|1 (per-step intervals end
at the float() sync, so step_ms_median is the real step period).
"""
import argparse
import os
import sys
import time

from corpus_common import StepClock


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--matmuls", type=int, default=4, help="GEMMs per step")
    p.add_argument("--dtype", choices=("float32", "float16"), default="float32")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args(argv)
    try:
        import cupy as cp
    except ImportError as e:
        print("cupy_matmul.py needs cupy: %s" % e, file=sys.stderr)
        return 2
    dtype = getattr(cp, args.dtype)
    rng = cp.random.default_rng(0)
    a = (rng.standard_normal((args.n, args.n), dtype=cp.float32) / args.n ** 0.5).astype(dtype)
    v = rng.standard_normal((args.n, args.n), dtype=cp.float32).astype(dtype)
    clock = StepClock()
    norm = 0.0
    for _ in range(args.steps):
        for _ in range(args.matmuls):
            v = cp.matmul(a, v)
        scale = cp.sqrt(cp.sum(v * v))
        v = v / scale
        v = cp.maximum(v, -1.0)
        norm = float(scale)  # the norm read back: a sync each step
        clock.tick()
    cp.cuda.Device().synchronize()
    t_end = time.perf_counter()
    clock.report("cupy_matmul", args.warmup, t_end, "step",
                 " n=%d matmuls=%d dtype=%s tf32=%s check=%.4g" % (
                     args.n, args.matmuls, args.dtype, os.environ.get("CUPY_TF32", "0"), norm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
