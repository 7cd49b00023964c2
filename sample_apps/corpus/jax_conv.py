#!/usr/bin/env python3
"""Corpus: a JAX convolution + matmul training step — XLA autotunes, PyTorch is not in the process
(issue 29: remedies in the program's own framework).

Style: plain JAX (no Flax): a small CNN written with jax.lax.conv_general_dilated (NHWC, three
convolutions, two with stride 2) and a dense layer, one @jax.jit step (forward, grad, SGD), fed
from NumPy batches, the loss read back every --log-every steps (default 1: a sync each step).
At the first call XLA compiles the step and autotunes its convolutions (cuDNN algorithms, timed
on the GPU) and GEMMs, as XLA_FLAGS --xla_gpu_autotune_level allows (default 4; 0 turns it off).
--batch-sizes cycles through several batch sizes: each new shape is a new compilation, with its
own autotuning (jit retraces per shape). GPU memory: no preallocation (unless set).

    python jax_conv.py                                             # autotuned at the first step
    XLA_FLAGS=--xla_gpu_autotune_level=0 python jax_conv.py         # autotuning off
    python jax_conv.py --batch-sizes 32,48,64 --shape-every 10      # recompiles for new shapes

What a correct diagnosis says:
  - start-up: XLA compilation with autotuning (ptxas children, cuDNN/cuBLAS timing runs) before
    the first step; remedies in JAX terms: the persistent compilation cache
    (jax_compilation_cache_dir), XLA_FLAGS --xla_gpu_autotune_level or its autotune cache (never
    torch.backends.cudnn.benchmark: there is no PyTorch here);
  - with autotune level 0: no autotuning named (the setting is already off);
  - --batch-sizes: compilation (and autotuning) recurs at each new batch size (compiles= in the
    CORPUS line), named with the count of shapes; remedy: fixed or padded batch shapes;
  - steps: --steps executions of jit(train_step); steady step as the program's clock.

Prints its own timing last: CORPUS name=jax_conv ... compiles=K first_step_s=... xla_autotune=L
and a CORPUS_STEPS line.
"""
import argparse
import os
import re
import sys
import time

from corpus_common import StepClock, format_slow, print_steps, slow_steps

# before JAX is imported (in main): no preallocation of most of the GPU's memory
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.10")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-sizes", default="64", help="comma-separated, cycled")
    p.add_argument("--shape-every", type=int, default=10, help="steps between batch-size changes")
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--width", type=int, default=64, help="channels of the first convolution")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--log-every", type=int, default=1, help="read the loss back every N steps")
    return p.parse_args(argv)


def autotune_level():
    """XLA's autotune level as XLA_FLAGS sets it ('default' when not set)."""
    m = re.search(r"--xla_gpu_autotune_level=(\d+)", os.environ.get("XLA_FLAGS", ""))
    return m.group(1) if m else "default"


def init_params(jax, jnp, width):
    """HWIO convolution kernels 3->w->2w->2w and a dense layer 2w->10."""
    chans = [3, width, 2 * width, 2 * width]
    keys = jax.random.split(jax.random.PRNGKey(0), len(chans))
    convs = [jax.random.normal(k, (3, 3, cin, cout), jnp.float32) * (2.0 / (9 * cin)) ** 0.5
             for k, cin, cout in zip(keys, chans[:-1], chans[1:])]
    dense = jax.random.normal(keys[-1], (chans[-1], 10), jnp.float32) * 0.05
    return {"convs": convs, "dense": dense}


def main(argv=None):
    args = parse_args(argv)
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except ImportError as e:
        print("jax_conv.py needs jax: %s" % e, file=sys.stderr)
        return 2
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax_conv.py: no GPU visible to JAX", file=sys.stderr)
        return 2
    if "torch" in sys.modules:  # the point of this program: no PyTorch in the process
        print("jax_conv.py: torch was imported", file=sys.stderr)
        return 2

    def forward(params, x):
        h = x
        for i, w in enumerate(params["convs"]):
            h = jax.lax.conv_general_dilated(h, w, window_strides=(1, 1) if i == 0 else (2, 2),
                                             padding="SAME",
                                             dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jax.nn.relu(h)
        h = jnp.mean(h, axis=(1, 2))
        return h @ params["dense"]

    def loss_fn(params, x, y):
        logits = forward(params, x)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 10), axis=-1))

    @jax.jit
    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        params = jax.tree.map(lambda w, g: w - 0.01 * g, params, grads)
        return params, loss

    params = init_params(jax, jnp, args.width)
    sizes = [int(s) for s in args.batch_sizes.split(",") if s.strip()]
    rng = np.random.default_rng(0)
    batches = {b: (rng.standard_normal((b, args.image_size, args.image_size, 3),
                                       dtype=np.float32),
                   rng.integers(0, 10, b).astype(np.int32)) for b in sizes}
    clock = StepClock()
    losses, seen = [], set()
    for i in range(args.steps):
        b = sizes[(i // max(1, args.shape_every)) % len(sizes)]
        seen.add(b)
        x, y = batches[b]
        params, loss = train_step(params, x, y)
        if (i + 1) % args.log_every == 0:
            losses.append(float(loss))  # the loss read back: a sync
        clock.tick()
    jax.block_until_ready(params)
    t_end = time.perf_counter()
    sync = "step" if args.log_every == 1 else "every%d" % args.log_every
    print_steps("jax_conv", clock.durations)
    clock.report("jax_conv", args.warmup, t_end, sync,
                 " compiles=%d xla_autotune=%s first_step_s=%.2f slow_steps=%s torch_loaded=%d" % (
                     len(seen), autotune_level(), clock.durations[0] / 1e3,
                     format_slow(slow_steps(clock.durations)), int("torch" in sys.modules)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
