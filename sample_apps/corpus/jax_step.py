#!/usr/bin/env python3
"""Corpus: a JAX/XLA program — a jit-compiled training step of a small MLP, plain jax (no Flax).

Style: one @jax.jit step (forward, grad, SGD update) fed with NumPy batches from the host (each
call copies its batch to the GPU), asynchronous dispatch, the loss read back (a sync) only every
--log-every steps, as JAX examples log. XLA reaches the CUDA libraries through pointers it looks up
itself, and, under a profiler, marks every thunk it runs with an NVTX range
("Thunk:#name=jit(train_step)/...") — many per step. XLA compiles at the first call, running ptxas
as child processes. GPU memory: no preallocation (XLA_PYTHON_CLIENT_PREALLOCATE=false and a
small XLA_PYTHON_CLIENT_MEM_FRACTION, unless set).

What a correct diagnosis says:
  - start-up: XLA compilation (and ptxas children) before the first step, not data loading;
  - steps: --steps (default 200) executions of jit(train_step), each a batch copy then the same
    short run of fused kernels; the XLA thunk ranges are per-operation, not steps;
  - the per-step GPU work is small (batch 256, 1024-wide layers): the GPU waits on host
    dispatch and the batch copies; the sync every 10 steps is not a stall worth advice.

    gputrace record -o jax_step -- python sample_apps/corpus/jax_step.py

Prints its own timing last: CORPUS name=jax_step ... sync=every10 (steps do not sync one by one,
so the steady period is step_ms_wall, measured up to a final block_until_ready).
"""
import os
import time

from corpus_common import report  # the CORPUS line; its clock starts here
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.10")

import argparse  # noqa: E402
import sys  # noqa: E402


def init_params(jax, jnp, sizes):
    keys = jax.random.split(jax.random.PRNGKey(0), len(sizes) - 1)
    return [(jax.random.normal(k, (m, n), jnp.float32) * (2.0 / m) ** 0.5, jnp.zeros((n,)))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10,
                   help="steps left out of the timing (ends on a logging sync)")
    p.add_argument("--log-every", type=int, default=10, help="read the loss back every N steps")
    args = p.parse_args(argv)
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except ImportError as e:
        print("jax_step.py needs jax: %s" % e, file=sys.stderr)
        return 2
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax_step.py: no GPU visible to JAX", file=sys.stderr)
        return 2

    sizes = [784, args.width, args.width, 10]
    params = init_params(jax, jnp, sizes)

    def loss_fn(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 10), axis=-1))

    @jax.jit
    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params = jax.tree.map(lambda w, g: w - 0.01 * g, params, grads)
        return params, loss

    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((args.batch_size, 784), dtype=np.float32),
                rng.integers(0, 10, args.batch_size).astype(np.int32)) for _ in range(8)]
    durations, step_ends, losses = [], [], []
    t_prev = time.perf_counter()
    for i in range(args.steps):
        x, y = batches[i % len(batches)]
        params, loss = train_step(params, x, y)
        if (i + 1) % args.log_every == 0:
            losses.append(float(loss))  # the only sync: logging
        t = time.perf_counter()
        durations.append((t - t_prev) * 1e3)
        step_ends.append(t)
        t_prev = t
    jax.block_until_ready(params)
    t_end = time.perf_counter()
    report("jax_step", args.warmup, durations, step_ends, t_end, "every%d" % args.log_every,
           " first_step_s=%.2f" % (durations[0] / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
