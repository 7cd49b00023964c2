#!/usr/bin/env python3
"""linking_cupy.py — a CuPy loop with matrix products (issue 30), for tools/gpu/um_and_linking.sh.
CuPy calls cuBLAS through its own Cython bindings: a float32 2-D matmul is cublasSgemmEx (or
GemmEx with a compute type set), a batched one cublasSgemmStridedBatched / GemmStridedBatchedEx,
a matrix-vector product cublasSgemv; the element-wise work between them is CuPy's own kernels
(launched through the driver API). Each iteration ends with float(...) (a sync).

  linking_cupy.py [--steps N] [--n N]
Prints its own timing last: LINKING name=cupy_matmul steps= step_ms_median=."""
import argparse
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--n", type=int, default=1024)
    args = ap.parse_args()
    try:
        import cupy as cp
    except ImportError as e:
        print("linking_cupy.py needs cupy: %s" % e, file=sys.stderr)
        return 2
    rng = cp.random.default_rng(0)
    n = args.n
    a = rng.standard_normal((n, n), dtype=cp.float32)
    b = rng.standard_normal((n, n), dtype=cp.float32)
    batch = rng.standard_normal((8, n // 4, n // 4), dtype=cp.float32)
    v = rng.standard_normal(n, dtype=cp.float32)
    times = []
    for i in range(args.steps):
        t0 = time.perf_counter()
        c = a @ b                      # 2-D matmul: cuBLAS GEMM
        c = cp.tanh(c * 0.001)         # CuPy's own element-wise kernels
        d = batch @ batch              # batched matmul
        w = c @ v                      # matrix-vector product
        s = float(w.sum() + d.mean())  # a reduction and the sync
        times.append((time.perf_counter() - t0) * 1e3)
    print("cupy", cp.__version__, "checksum", round(s, 3))
    print("LINKING name=cupy_matmul steps=%d step_ms_median=%.3f" %
          (args.steps, statistics.median(times[len(times) // 3:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
