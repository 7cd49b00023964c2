#!/usr/bin/env python3
"""What tracing costs per launch on the CPU and per kernel on the GPU, measured inside one process
(the paired method of paired_overhead.py: blocks traced and not traced in ABBA order, through
GPUTRACE_CAPTURE=profiler-api and cudaProfilerStart/Stop).

A training step's overhead is made of these two parts: where the CPU feeds the GPU too slowly
(launch-bound stretches) every microsecond added to a launch shows; where the GPU is saturated,
only what tracing adds to each kernel's time on the GPU shows. The three loops:
  launch:  tiny x.add_(1), CPU-bound (the kernel is shorter than its launch): us per launch
  gpu:     back-to-back adds on a 64 MB tensor (~25 us each), GPU-bound (the launch queue stays
           full): us per kernel on the GPU, including the gap between kernels
  conv:    a small conv2d (cudnnBackendExecute and its kernels), CPU-bound: us per call

    kernel_cost.py bench --lib LIB --out DIR [--configs a,b] [--procs 2]
    kernel_cost.py worker (one process: prints RESULT {loop: {traced: [...], plain: [...]}})
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paired_overhead import CONFIGS, run_worker  # noqa: E402

LOOPS = ("launch", "gpu", "conv")


def worker(a):
    import torch
    import torch.nn.functional as F
    dev = torch.device("cuda")
    tiny = torch.zeros(1, device=dev)
    big = torch.zeros(16 << 20, device=dev)
    x = torch.randn(8, 32, 28, 28, device=dev)
    w = torch.randn(32, 32, 3, 3, device=dev)
    torch.backends.cudnn.benchmark = False

    def timed(n, fn):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e6 / n

    def run_loops():
        return {"launch": timed(a.launches, lambda: tiny.add_(1)),
                "gpu": timed(a.kernels, lambda: big.add_(1)),
                "conv": timed(a.convs, lambda: F.conv2d(x, w, padding=1))}

    for _ in range(3):
        run_loops()
    out = {k: {"traced": [], "plain": []} for k in LOOPS}
    pattern = [False, True, True, False]
    for b in range(a.blocks):
        traced = pattern[b % 4]
        if traced:
            torch.cuda.profiler.start()
        run_loops()  # the transition: CUPTI's kinds switched on or off, first buffers
        r = run_loops()
        if traced:
            torch.cuda.profiler.stop()
        for k in LOOPS:
            out[k]["traced" if traced else "plain"].append(r[k])
    print("RESULT " + json.dumps(out), flush=True)


def run(config, a):
    args = [sys.executable, os.path.abspath(__file__), "worker", "--blocks", str(a.blocks),
            "--launches", str(a.launches), "--kernels", str(a.kernels), "--convs", str(a.convs)]
    return run_worker(args, a.lib, CONFIGS[config], config, timeout=300)[0]


def bench(a):
    os.makedirs(a.out, exist_ok=True)
    configs = [c for c in a.configs.split(",") if c]
    res = {}
    for rep in range(a.procs):
        for config in configs[rep % len(configs):] + configs[:rep % len(configs)]:
            r = run(config, a)
            if not r:
                continue
            row = {}
            for k in LOOPS:
                tr, pl = statistics.median(r[k]["traced"]), statistics.median(r[k]["plain"])
                row[k] = (tr - pl, pl)
            res.setdefault(config, []).append(row)
            print(f"{config} rep {rep}: " + ", ".join(
                f"{k} +{row[k][0]:.3f} us (plain {row[k][1]:.2f})" for k in LOOPS), flush=True)
    head = " | ".join(f"{k}: added us (plain us)" for k in LOOPS)
    lines = [f"# Added cost per operation ({a.procs} processes per row, {a.blocks} blocks ABBA; "
             f"{time.strftime('%Y-%m-%d %H:%M')})", "",
             f"| config | processes | {head} |", "|---|---|" + "---|" * len(LOOPS)]
    for config, v in res.items():
        cells = []
        for k in LOOPS:
            added = [x[k][0] for x in v]
            cells.append(f"{statistics.median(added):+.3f} ({statistics.median(x[k][1] for x in v):.2f}; "
                         + " ".join(f"{d:+.2f}" for d in added) + ")")
        lines.append(f"| {config} | {len(v)} | " + " | ".join(cells) + " |")
    with open(os.path.join(a.out, "kernel_cost.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--lib", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--configs", default="gputrace,gputrace_no_links,gputrace_cupti_off")
    b.add_argument("--procs", type=int, default=2)
    w = sub.add_parser("worker")
    for p in (b, w):
        p.add_argument("--blocks", type=int, default=16)
        p.add_argument("--launches", type=int, default=3000)
        p.add_argument("--kernels", type=int, default=600)
        p.add_argument("--convs", type=int, default=300)
    a = ap.parse_args()
    (bench if a.cmd == "bench" else worker)(a)


if __name__ == "__main__":
    main()
