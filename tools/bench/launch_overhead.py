#!/usr/bin/env python3
"""Per-call cost of tracing on launch-bound work (issue 4: ResNet-18 b4 is launch-bound), split by
what gputrace does: merely loaded, wrappers only, CUPTI records without the correlation callbacks,
the default, and torch.profiler. Measures microseconds per operation in tight loops, where the CPU
issues work as fast as it can, so every nanosecond added per call shows:

  launch_bound (C sample, shared cudart): cudaLaunchKernel-style <<<>>> launches
  torch: tiny x.add_(1) (one __cudaLaunchKernel each), a small conv2d (cudnnBackendExecute),
         a small mm (cuBLAS)

    launch_overhead.py bench --lib build-gpu/lib/libgputrace.so --sample build-gpu/sample_apps/launch_bound
                             --out DIR [--repeats 3]
    launch_overhead.py worker          (one process: prints RESULT {op: us_per_op})
Each configuration runs in a fresh process, the configurations interleaved in rotated order.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

CONFIGS = {
    "untraced": None,
    "disabled": {"GPUTRACE_DISABLE": "1"},
    "wrappers_only": {"GPUTRACE_CUPTI": "0"},
    "cupti_no_callbacks": {"GPUTRACE_CUPTI_CALLBACKS": "0"},
    "default_stacks_off": {"GPUTRACE_STACKS": "off"},
    "default": {},
    "torch_profiler": None,
}


def worker(a):
    import torch
    import torch.nn.functional as F
    dev = torch.device("cuda")
    prof = None
    if a.profiler:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    x = torch.zeros(256, device=dev)
    img = torch.randn(1, 8, 16, 16, device=dev)
    w = torch.randn(8, 8, 3, 3, device=dev)
    m = torch.randn(16, 16, device=dev)
    ops = {
        "add_": lambda: x.add_(1.0),
        "conv2d": lambda: F.conv2d(img, w, padding=1),
        "mm": lambda: torch.mm(m, m),
    }
    out = {}
    for name, fn in ops.items():
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        best = None
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(a.n):
                fn()
            torch.cuda.synchronize()
            us = (time.perf_counter() - t0) * 1e6 / a.n
            best = us if best is None else min(best, us)
        out[name] = best
    print("RESULT " + json.dumps(out), flush=True)
    if prof:
        os._exit(0)


def env_for(config, lib, tmp):
    env = dict(os.environ)
    extra = CONFIGS[config]
    if extra is not None:
        env.update(LD_PRELOAD=lib, GPUTRACE_DIR=tmp, GPUTRACE_QUIET="1", **extra)
    return env


def run_one(config, a, kind):
    with tempfile.TemporaryDirectory(prefix="gtlo-") as tmp:
        env = env_for(config, a.lib, tmp)
        if kind == "torch":
            args = [sys.executable, os.path.abspath(__file__), "worker", "--n", str(a.n)]
            if config == "torch_profiler":
                args.append("--profiler")
        else:
            if config == "torch_profiler":
                return None
            args = [a.sample]
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        if kind == "torch":
            for line in p.stdout.splitlines():
                if line.startswith("RESULT "):
                    return json.loads(line[7:])
        else:
            m = re.search(r"\(([\d.]+) us/launch\)", p.stdout)
            if m:
                return {"launch": float(m.group(1))}
        sys.stderr.write(f"{kind}/{config}: rc={p.returncode}\n{p.stderr[-1500:]}\n")
        return None


def bench(a):
    os.makedirs(a.out, exist_ok=True)
    names = list(CONFIGS)
    res = {}  # (op, config) -> [us]
    for rep in range(a.repeats):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for config in order:
            for kind in ("c", "torch"):
                r = run_one(config, a, kind)
                for op, us in (r or {}).items():
                    res.setdefault((op, config), []).append(us)
                print(f"rep {rep} {kind} {config}: {r}", flush=True)
    ops = sorted({op for op, _ in res}, key=["launch", "add_", "conv2d", "mm"].index)
    lines = [f"# Per-operation cost, launch-bound loops ({a.repeats} interleaved repeats, "
             f"{time.strftime('%Y-%m-%d %H:%M')})", "",
             "Median over processes of each process's best-of-5 µs per operation; in brackets the "
             "added µs against untraced.", "",
             "| config | " + " | ".join(f"{op} µs" for op in ops) + " |",
             "|---|" + "---|" * len(ops)]
    for config in names:
        cells = []
        for op in ops:
            v = res.get((op, config))
            base = res.get((op, "untraced"))
            if not v:
                cells.append("-")
                continue
            med = statistics.median(v)
            add = f" (+{med - statistics.median(base):.2f})" if base and config != "untraced" else ""
            cells.append(f"{med:.2f}{add}")
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    lines += ["", "Raw: " + json.dumps({f"{o}/{c}": [round(x, 3) for x in v] for (o, c), v in res.items()})]
    with open(os.path.join(a.out, "launch_overhead.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--lib", required=True)
    b.add_argument("--sample", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--repeats", type=int, default=3)
    b.add_argument("--n", type=int, default=4000)
    w = sub.add_parser("worker")
    w.add_argument("--n", type=int, default=4000)
    w.add_argument("--profiler", action="store_true")
    a = ap.parse_args()
    (bench if a.cmd == "bench" else worker)(a)


if __name__ == "__main__":
    main()
