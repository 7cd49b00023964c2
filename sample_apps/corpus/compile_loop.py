#!/usr/bin/env python3
"""Corpus: torch.compile's own compilation in the process — first compilation and recompiles
(issue 30: in-process compilation named as such, not "warm-up").

Style: a small MLP trained with its loss function wrapped in torch.compile(mode=--mode,
dynamic=--dynamic); the optimizer (fused AdamW) stays eager; loss.item() every --log-every steps
(default 1: a sync each step, so each step's interval is its real period). Dynamo traces the
Python, Inductor generates Triton kernels compiled by its pool of compile-worker processes (and
with mode="reduce-overhead" CUDA graph trees record and replay them). --batch-sizes cycles the
batch size every --shape-every steps: with --dynamic false every new size recompiles, with
--dynamic true one compilation serves all, with --dynamic none (PyTorch's default) the first
change recompiles once with the batch dimension made dynamic. The Inductor and Triton caches are
fresh folders unless set (a first run).

    python compile_loop.py --mode reduce-overhead                       # ~20 s of compilation
    python compile_loop.py --mode default
    python compile_loop.py --mode default --dynamic false --batch-sizes 256,320,384,448
    python compile_loop.py --mode default --dynamic true --batch-sizes 256,320,384,448

What a correct diagnosis says:
  - the first step's seconds (first_step_s) are compilation in the process — Dynamo and
    Inductor on the main thread, Triton kernels built by compile workers (helper processes, not
    ranks), module loads at the first launches — named compilation with that evidence, a
    one-time cost, not warm-up and not data loading;
  - --dynamic false with changing sizes: recompiles after the first steps (recompile_s and
    slow_steps in the CORPUS line, one per new size), told apart from the first compilation and
    counted, with the remedy (torch.compile(dynamic=True) / torch._dynamo.mark_dynamic, fixed or
    bucketed sizes); --dynamic true: one compilation, no recompiles;
  - steps: --steps, the steady step as the program's clock; reduce-overhead replays graphs.

Prints its own timing last: CORPUS name=compile_loop ... mode=... dynamic=... first_step_s=...
recompile_s=... slow_steps=i:ms,... and a CORPUS_STEPS line.
"""
import argparse
import sys
import time

from corpus_common import (StepClock, format_slow, fresh_cache_dirs, print_steps, remove_dirs,
                           slow_steps)

MADE_DIRS = fresh_cache_dirs("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")  # a first run


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("default", "reduce-overhead", "max-autotune-no-cudagraphs"),
                   default="reduce-overhead")
    p.add_argument("--dynamic", choices=("none", "true", "false"), default="none",
                   help="torch.compile(dynamic=None|True|False)")
    p.add_argument("--batch-sizes", default="512", help="comma-separated, cycled")
    p.add_argument("--shape-every", type=int, default=10, help="steps between size changes")
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--log-every", type=int, default=1, help="loss.item() every N steps")
    return p.parse_args(argv)


def dynamo_count(key):
    """A Dynamo counter (torch._dynamo.utils.counters['stats'][key]), -1 where unavailable."""
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"][key])
    except Exception:  # a private API: its absence is a fact, not a failure
        return -1


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print("compile_loop.py needs torch: %s" % e, file=sys.stderr)
        return 2
    torch.manual_seed(0)
    w = args.width
    model = torch.nn.Sequential(torch.nn.Linear(512, w), torch.nn.GELU(), torch.nn.Linear(w, w),
                                torch.nn.GELU(), torch.nn.Linear(w, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    dynamic = {"none": None, "true": True, "false": False}[args.dynamic]

    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    compiled = torch.compile(loss_fn, mode=args.mode, dynamic=dynamic)
    sizes = [int(s) for s in args.batch_sizes.split(",") if s.strip()]
    data = {b: (torch.randn(b, 512, device="cuda"), torch.randint(0, 10, (b,), device="cuda"))
            for b in sizes}
    graphs = args.mode == "reduce-overhead"
    clock = StepClock()
    losses, new_size_steps, seen = [], [], set()
    for i in range(args.steps):
        b = sizes[(i // max(1, args.shape_every)) % len(sizes)]
        if b not in seen:
            seen.add(b)
            new_size_steps.append(i)
        x, y = data[b]
        if graphs:
            torch.compiler.cudagraph_mark_step_begin()
        loss = compiled(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (i + 1) % args.log_every == 0:
            losses.append(loss.item())  # logging: the step's sync
        clock.tick()
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    remove_dirs(MADE_DIRS)
    recompile_ms = sum(clock.durations[i] for i in new_size_steps[1:])
    sync = "step" if args.log_every == 1 else "every%d" % args.log_every
    print_steps("compile_loop", clock.durations)
    clock.report("compile_loop", args.warmup, t_end, sync,
                 " mode=%s dynamic=%s sizes=%d first_step_s=%.2f recompile_s=%.2f "
                 "slow_steps=%s unique_graphs=%d" % (
                     args.mode, args.dynamic, len(seen), clock.durations[0] / 1e3,
                     recompile_ms / 1e3, format_slow(slow_steps(clock.durations)),
                     dynamo_count("unique_graphs")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
