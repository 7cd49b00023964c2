#!/usr/bin/env python3
"""A small JAX CNN training loop (plain jax.lax, no Flax) for gputrace's framework evidence.

JAX/XLA reaches cudart and cuDNN through pointers it looks up itself (dlopen/dlsym), so an
LD_PRELOAD wrapper alone sees none of its calls; gputrace's dlsym interposition and CUPTI do:

    gputrace record -o jax -- python sample_apps/train_jax.py --steps 30
"""
import argparse
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    return p.parse_args(argv)


def init_params(jax, jnp, args):
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    c = args.channels

    def conv(k, cin, cout):  # HWIO
        return jax.random.normal(k, (3, 3, cin, cout), jnp.float32) * (2.0 / (9 * cin)) ** 0.5

    return {
        "c1": conv(keys[0], 3, c),
        "c2": conv(keys[1], c, c),
        "c3": conv(keys[2], c, 2 * c),
        "fc": jax.random.normal(keys[3], (2 * c, 10), jnp.float32) * 0.01,
    }


def forward(jax, jnp, params, x):
    dn = ("NHWC", "HWIO", "NHWC")
    for name, stride in (("c1", 1), ("c2", 2), ("c3", 2)):
        x = jax.lax.conv_general_dilated(x, params[name], (stride, stride), "SAME",
                                         dimension_numbers=dn)
        x = jax.nn.relu(x)
    x = x.mean(axis=(1, 2))
    return x @ params["fc"]


def main(argv=None):
    args = parse_args(argv)
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        print("train_jax.py needs jax: %s" % e, file=sys.stderr)
        return 2
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("train_jax.py: no GPU visible to JAX", file=sys.stderr)
        return 2

    params = init_params(jax, jnp, args)

    def loss_fn(p, x, y):
        logits = forward(jax, jnp, p, x)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 10), axis=-1))

    @jax.jit
    def step(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), loss

    rng = jax.random.PRNGKey(1)
    import numpy as np
    host_x = np.random.default_rng(0).standard_normal(
        (args.batch_size, args.image_size, args.image_size, 3), dtype=np.float32)
    host_y = np.arange(args.batch_size) % 10
    times = []
    for i in range(args.steps):
        t0 = time.perf_counter()
        x = jax.device_put(host_x)  # a host-to-device copy per step, as a data pipeline would
        y = jax.device_put(host_y)
        params, loss = step(params, x, y)
        loss.block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3)
    del rng
    steady = times[args.warmup:] or times
    print("step times (ms): " + " ".join("%.1f" % t for t in times))
    print("steady state: %.2f ms/step over %d steps (final loss %.3f)" % (
        sorted(steady)[len(steady) // 2], len(steady), float(loss)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
