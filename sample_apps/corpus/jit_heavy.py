#!/usr/bin/env python3
"""Corpus: a JIT-heavy start-up — many CuPy RawKernels compiled by NVRTC, then a short loop.

Style: hand-written CUDA C kernels in Python strings (cupy.RawKernel), one per "operator variant"
(--kernels of them, default 40, each with its own constants and an unrolled polynomial), compiled
in-process by NVRTC and loaded with cuModuleLoadData at first use — like a library that generates
its kernels. CuPy's on-disk kernel cache is off (CUPY_CACHE_IN_MEMORY=1, unless set), so every run
compiles, as a first run or a new shape does. Then --steps (default 100) short steps, each
launching 8 of the kernels and reading one value back (a sync).

What a correct diagnosis says:
  - start-up: several seconds (compile_s in the CORPUS line) of CPU in NVRTC and module loading,
    with the GPU idle: JIT compilation, not data loading and not the GPU;
  - steps: --steps (default 100), each 8 kernel launches and one device-to-host read (the step's
    sync); in steady state the GPU is busy a small part of each step (small kernels);
  - advice about the start-up: cache the compiled kernels (CuPy's disk cache, the default), or
    compile fewer variants; nothing about the steady loop beyond its small kernels.

    gputrace record -o jit_heavy -- python sample_apps/corpus/jit_heavy.py

Prints its own timing last: CORPUS name=jit_heavy ... compile_s=... (per-step intervals end at the
read-back, so step_ms_median is the real step period).
"""
import os
import time

from corpus_common import report  # the CORPUS line; its clock starts here
os.environ.setdefault("CUPY_CACHE_IN_MEMORY", "1")

import argparse  # noqa: E402
import sys  # noqa: E402

KERNEL_TEMPLATE = r"""
extern "C" __global__ void variant_%(k)d(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = x[i], acc = %(c0)f;
#pragma unroll
    for (int t = 0; t < %(unroll)d; t++)
        acc = acc * v + %(c1)f / (t + %(k)d + 1) + sinf(acc * %(c2)f);
    y[i] = acc;
}
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", type=int, default=40, help="distinct kernels compiled at start")
    p.add_argument("--unroll", type=int, default=24, help="unrolled loop length in each kernel")
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    args = p.parse_args(argv)
    try:
        import cupy as cp
    except ImportError as e:
        print("jit_heavy.py needs cupy: %s" % e, file=sys.stderr)
        return 2

    x = cp.random.default_rng(0).standard_normal(args.n, dtype=cp.float32)
    y = cp.empty_like(x)
    z = cp.empty_like(x)
    threads = 256
    blocks = (args.n + threads - 1) // threads
    t_compile = time.perf_counter()
    kernels = []
    for k in range(args.kernels):
        src = KERNEL_TEMPLATE % {"k": k, "c0": 0.5 + k * 0.01, "c1": 1.0 + k * 0.1,
                                 "c2": 0.25 + k * 0.001, "unroll": args.unroll}
        kern = cp.RawKernel(src, "variant_%d" % k)
        kern((blocks,), (threads,), (x, y, cp.int32(args.n)))  # first launch: NVRTC + load
        kernels.append(kern)
    cp.cuda.Device().synchronize()
    compile_s = time.perf_counter() - t_compile

    durations, step_ends = [], []
    t_prev = time.perf_counter()
    for s in range(args.steps):
        for j in range(8):
            kern = kernels[(s * 8 + j) % len(kernels)]
            src, dst = (x, y) if j % 2 == 0 else (y, z)  # x stays the input
            kern((blocks,), (threads,), (src, dst, cp.int32(args.n)))
        check = float(z[0])  # read one value back: the step's sync
        t = time.perf_counter()
        durations.append((t - t_prev) * 1e3)
        step_ends.append(t)
        t_prev = t
    cp.cuda.Device().synchronize()
    t_end = time.perf_counter()
    report("jit_heavy", args.warmup, durations, step_ends, t_end, "step",
           " kernels=%d compile_s=%.2f check=%.3g" % (args.kernels, compile_s, check))
    return 0


if __name__ == "__main__":
    sys.exit(main())
