#!/usr/bin/env python3
"""Corpus: a loop whose GPU is idle almost all the time for a reason no classic rule names — the
host's own work between small GPU steps (issue 29: the verdict is never silent at a few % busy).

Style: a simulation-like loop: each step the host spends --host-ms on its own work (--kind busy:
NumPy on a small state; --kind sleep: waiting, as on a socket or a queue), then hands a small
GPU update to PyTorch (a few element-wise kernels and one 1024x1024 matmul, under a
millisecond), and by default never waits for it (no copy, no sync in the loop; one at the end).
No data comes from the host, no kernel storm, no sync each step: not data loading, not
launch-bound, not a sync stall. --sync 1 reads one value back each step (a sync that waits for a
short GPU step, then the host works on: a sync stall worth well under 5%).

    python host_bound.py --kind busy            # ~2% GPU busy: host work without CUDA calls
    python host_bound.py --kind sleep
    python host_bound.py --kind busy --sync 1   # plus a sync each step that costs little

What a correct diagnosis says:
  - steps: --steps, the step as the program's clock (host_ms plus the launches);
  - the GPU is busy a few % of each step (gpu_ms_per_step in the CORPUS line, from CUDA events);
    no rule fires with a saving worth listing, and the verdict still names the largest measured
    idle cause — host work without CUDA calls, ~host_ms a step, its share of the step — rather
    than "no advice";
  - --sync 1: the sync stall's saving is at most the GPU time it waits for; below ~1% of the step
    it is folded into the "minor" line, never critical.

Prints its own timing last: CORPUS name=host_bound ... host_ms=... gpu_ms_per_step=...
"""
import argparse
import statistics
import sys
import time

import numpy as np

from corpus_common import StepClock, delay


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kind", choices=("busy", "sleep"), default="busy")
    p.add_argument("--host-ms", type=float, default=20.0, help="host work per step")
    p.add_argument("--sync", type=int, choices=(0, 1), default=0, help="read a value each step")
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    return p.parse_args(argv)


def host_work(state, ms, kind):
    """The host's step: NumPy updates of a small state until ms have passed (busy), or a wait."""
    if kind == "sleep":
        delay(ms, "sleep")
        return state
    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        state = np.tanh(state @ state.T * 1e-3 + 0.01)
    return state


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print("host_bound.py needs torch: %s" % e, file=sys.stderr)
        return 2
    torch.manual_seed(0)
    state = np.random.default_rng(0).standard_normal((128, 128))
    field = torch.randn(1 << 22, device="cuda")
    a = torch.randn(1024, 1024, device="cuda")
    events = []
    clock = StepClock()
    value = 0.0
    for _ in range(args.steps):
        state = host_work(state, args.host_ms, args.kind)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        field.mul_(0.999).add_(0.001)
        field.clamp_(-10.0, 10.0)
        a = torch.tanh(a @ a * 1e-3)
        end.record()
        events.append((start, end))
        if args.sync:
            value = field[0].item()  # one value back: a sync each step
        clock.tick()
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    gpu_ms = [s.elapsed_time(e) for s, e in events[args.warmup:]] or [0.0]
    clock.report("host_bound", args.warmup, t_end, "step" if args.sync else "end",
                 " kind=%s host_ms=%.1f gpu_ms_per_step=%.3f check=%.3g" % (
                     args.kind, args.host_ms, statistics.median(gpu_ms),
                     value + float(state[0, 0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
