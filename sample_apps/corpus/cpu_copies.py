#!/usr/bin/env python3
"""Corpus: x.cpu() of a large tensor every step (pageable device-to-host copies), and the pinned
fix (issues 29 and 30).

Style: a loop whose step computes on the GPU (--matmuls fp32 matmuls of --n x --n, then an update
of the --mb MB tensor x) and brings x back to the host the way most code does, `x.cpu()`: each
call allocates a fresh pageable tensor, and the driver stages the copy through its own pinned
bounce buffer while the GPU waits. --mode pinned copies into a pinned buffer allocated once
(`buf.copy_(x)`), at the link's rate. CUDA events around each copy give its GPU-side time.
--measure-peak (on by default) ends the run with one timed pageable and one timed pinned copy of
the same tensor: the run holds its own pinned rate, as a user would measure it.

    python cpu_copies.py --mode pageable                    # ~half of each step in the copy
    python cpu_copies.py --mode pageable --no-measure-peak  # no pinned copy anywhere in the run
    python cpu_copies.py --mode pinned                      # the fix

What a correct diagnosis says:
  - pageable: each step is --matmuls matmuls then a 400 MB pageable device-to-host copy of
    copy_ms_median (the CORPUS line) at copy_gbs; the copy is a large share of the run
    (copy_share), its saving estimated from a measured pinned rate — this run's own pinned copy
    (measured_pinned_gbs) when --measure-peak, else the doctor's peak or the link's nominal rate,
    saying which — and ranked by that saving (not last because "not estimated"); remedy in
    PyTorch terms: a pinned buffer reused (`torch.empty(..., pin_memory=True)`, `copy_`), or
    `x.to("cpu", non_blocking=True)` into pinned memory; the GPU idle while the driver stages the
    copy belongs to the copy, never to data loading;
  - pinned: no pageable-copy advice for the loop; the copies run at the pinned rate (with
    --measure-peak, the one timed x.cpu() after the loop is a real pageable copy: advice about
    it counts that copy alone, over the run);
  - the fp32 matmuls are a smaller share (the AMP/TF32 advice, if any, ranks by its own saving).

Prints its own timing last: CORPUS name=cpu_copies ... copy_ms_median=... copy_gbs=...
copy_share=... measured_pageable_gbs=... measured_pinned_gbs=... (steps end when x.cpu()
returns: each step waits for its copy, so step_ms_median is the real step period).
"""
import argparse
import statistics
import sys
import time

from corpus_common import StepClock


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("pageable", "pinned"), default="pageable")
    p.add_argument("--mb", type=int, default=400, help="size of the tensor copied back")
    p.add_argument("--steps", type=int, default=10, help="copies (one per step)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--matmuls", type=int, default=24, help="fp32 matmuls per step")
    p.add_argument("--n", type=int, default=4096, help="matmul size")
    p.add_argument("--measure-peak", dest="measure_peak", action="store_true", default=True)
    p.add_argument("--no-measure-peak", dest="measure_peak", action="store_false")
    return p.parse_args(argv)


def timed_copy_gbs(torch, copy, nbytes):
    """GB/s of one copy, timed on the host from an idle device to its return."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    copy()
    torch.cuda.synchronize()
    return nbytes / (time.perf_counter() - t0) / 1e9


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError as e:
        print("cpu_copies.py needs torch: %s" % e, file=sys.stderr)
        return 2
    torch.manual_seed(0)
    numel = args.mb * (1 << 20) // 4
    nbytes = numel * 4
    x = torch.randn(numel, device="cuda")
    a = torch.randn(args.n, args.n, device="cuda")
    b = torch.randn(args.n, args.n, device="cuda")
    c = torch.empty(args.n, args.n, device="cuda")
    pinned = torch.empty(numel, pin_memory=True) if args.mode == "pinned" else None
    events = []
    clock = StepClock()
    for _ in range(args.steps):
        for _ in range(args.matmuls):
            torch.matmul(a, b, out=c)
        x.add_(1.0)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        if pinned is None:
            host = x.cpu()  # a fresh pageable tensor each time
        else:
            pinned.copy_(x)  # into the pinned buffer allocated once
            host = pinned
        end.record()
        events.append((start, end))
        clock.tick()
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    loop_s = t_end - clock.step_ends[0] + clock.durations[0] / 1e3
    copy_ms = [s.elapsed_time(e) for s, e in events]
    steady = copy_ms[args.warmup:] or copy_ms
    copy_med = statistics.median(steady)

    peaks = ""
    if args.measure_peak:
        if pinned is None:
            pinned = torch.empty(numel, pin_memory=True)
        pageable_gbs = timed_copy_gbs(torch, lambda: x.cpu(), nbytes)
        pinned_gbs = timed_copy_gbs(torch, lambda: pinned.copy_(x), nbytes)
        peaks = " measured_pageable_gbs=%.2f measured_pinned_gbs=%.2f" % (pageable_gbs, pinned_gbs)
    clock.report("cpu_copies", args.warmup, t_end, "step",
                 " mode=%s mb=%d copy_ms_median=%.2f copy_gbs=%.2f copy_share=%.3f matmuls=%d "
                 "check=%.3g%s" % (args.mode, args.mb, copy_med, nbytes / copy_med / 1e6,
                                   sum(copy_ms) / 1e3 / loop_s, args.matmuls, float(host[0]),
                                   peaks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
