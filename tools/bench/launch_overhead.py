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

FLOOR = {"CUDA_INJECTION64_PATH": "@floor@"}  # tools/bench/cupti_floor.c, no gputrace
# name -> (gputrace environment (None: not preloaded), extra environment, worker args, what it is)
CONFIGS = {
    "untraced": (None, {}, [], "no gputrace"),
    "disabled": ({"GPUTRACE_DISABLE": "1"}, {}, [], "libgputrace.so loaded, recording nothing"),
    "wrappers_only": ({"GPUTRACE_CUPTI": "0"}, {}, [], "wrappers and writer, no CUPTI"),
    "kernels": ({"GPUTRACE_CUPTI_KINDS": "kernel", "GPUTRACE_CUPTI_CALLBACKS": "0"}, {}, [],
                "wrappers + CUPTI kernel records, no callback"),
    "cupti_no_callbacks": ({"GPUTRACE_CUPTI_CALLBACKS": "0"}, {}, [], "every kind, no callback"),
    "default_stacks_off": ({"GPUTRACE_STACKS": "off"}, {}, [], "default without call-site stacks"),
    "default": ({}, {}, [], "gputrace as users run it"),
    "paused": ({"GPUTRACE_CAPTURE": "signal"}, {}, [],
               "capture armed, never signalled (CUPTI attaches at the first window)"),
    "after_window_keep": ({"GPUTRACE_CAPTURE": "signal", "GPUTRACE_CUPTI_DETACH": "0"}, {},
                          ["--window"], "after one capture window, kinds disabled, CUPTI attached"),
    "after_window_detach": ({"GPUTRACE_CAPTURE": "signal", "GPUTRACE_CUPTI_DETACH": "1"}, {},
                            ["--window"], "after one capture window, CUPTI detached (cuptiFinalize)"),
    "floor_none": (None, dict(FLOOR, CUPTI_FLOOR_KINDS="none"), [],
                   "minimal CUPTI client: buffers registered, no kind"),
    "floor_kernels": (None, FLOOR, [], "minimal CUPTI client: kernel records"),
    "floor_off": (None, dict(FLOOR, CUPTI_FLOOR_OFF_MS="1000"), [],
                  "minimal client: kernel records, disabled after 1 s"),
    "floor_finalized": (None, dict(FLOOR, CUPTI_FLOOR_OFF_MS="1000", CUPTI_FLOOR_FINALIZE="1"), [],
                        "minimal client: kernel records, disabled and cuptiFinalize after 1 s"),
    "torch_profiler": (None, {}, ["--profiler"], "torch.profiler (CPU + CUDA)"),
}
DEFAULT_CONFIGS = "untraced,disabled,wrappers_only,cupti_no_callbacks,default_stacks_off,default,torch_profiler"


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
    for fn in ops.values():
        fn()
    torch.cuda.synchronize()
    if a.window:  # one capture window (GPUTRACE_CAPTURE=signal), then measure after it
        import signal
        os.kill(os.getpid(), signal.SIGUSR2)
        time.sleep(0.3)
        for _ in range(200):
            for fn in ops.values():
                fn()
        torch.cuda.synchronize()
        os.kill(os.getpid(), signal.SIGUSR2)
    time.sleep(a.settle)  # delayed switches (floor_off, a detach) have happened before timing
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


def env_for(config, a, tmp):
    env = dict(os.environ)
    gt_env, extra, _, _ = CONFIGS[config]
    if gt_env is not None:
        env.update(LD_PRELOAD=a.lib, GPUTRACE_DIR=tmp, GPUTRACE_QUIET="1", **gt_env)
    for k, v in extra.items():
        env[k] = v.replace("@floor@", a.floor or "")
    if a.cupti_lib:
        env["CUPTI_FLOOR_LIB"] = a.cupti_lib
    return env


def run_one(config, a, kind):
    with tempfile.TemporaryDirectory(prefix="gtlo-") as tmp:
        env = env_for(config, a, tmp)
        worker_args = CONFIGS[config][2]
        if kind == "torch":
            args = [sys.executable, os.path.abspath(__file__), "worker", "--n", str(a.n),
                    "--settle", str(a.settle)] + worker_args
        else:
            if worker_args or not a.sample:
                return None
            args = [a.sample]
        if a.cpus:
            args = ["taskset", "-c", a.cpus] + args
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
        for line in p.stderr.splitlines():
            if line.startswith("cupti_floor:"):
                print(f"  {config}: {line}", flush=True)
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


def write_table(a, names, res, done):
    ops = sorted({op for op, _ in res}, key=["launch", "add_", "conv2d", "mm"].index)
    lines = [f"# Per-operation cost, launch-bound loops ({done} of {a.repeats} interleaved repeats, "
             f"{time.strftime('%Y-%m-%d %H:%M')})", "",
             "Median over processes of each process's best-of-5 µs per operation; in brackets the "
             "added µs against untraced.", "",
             "| config | " + " | ".join(f"{op} µs" for op in ops) + " | what |",
             "|---|" + "---|" * len(ops) + "---|"]
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
        lines.append(f"| {config} | " + " | ".join(cells) + f" | {CONFIGS[config][3]} |")
    lines += ["", "Raw: " + json.dumps({f"{o}/{c}": [round(x, 3) for x in v] for (o, c), v in res.items()})]
    with open(os.path.join(a.out, "launch_overhead.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def bench(a):
    os.makedirs(a.out, exist_ok=True)
    names = a.configs.split(",")
    unknown = [c for c in names if c not in CONFIGS]
    if unknown:
        sys.exit(f"unknown configs: {unknown}")
    if any("@floor@" in v for c in names for v in CONFIGS[c][1].values()) and not a.floor:
        sys.exit("floor_* configs need --floor PATH/libcupti_floor.so")
    res = {}  # (op, config) -> [us]
    for rep in range(a.repeats):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for config in order:
            for kind in ("c", "torch") if a.sample else ("torch",):
                r = run_one(config, a, kind)
                for op, us in (r or {}).items():
                    res.setdefault((op, config), []).append(us)
                print(f"rep {rep} {kind} {config}: {r}", flush=True)
        write_table(a, names, res, rep + 1)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--lib", required=True)
    b.add_argument("--sample", help="the launch_bound C sample (optional)")
    b.add_argument("--configs", default=DEFAULT_CONFIGS)
    b.add_argument("--floor", help="libcupti_floor.so, for the floor_* configs")
    b.add_argument("--cupti-lib", help="the libcupti the floor loads if none is mapped")
    b.add_argument("--cpus", help="pin every process to these cores (taskset)")
    b.add_argument("--settle", type=float, default=0.0)
    b.add_argument("--out", required=True)
    b.add_argument("--repeats", type=int, default=3)
    b.add_argument("--n", type=int, default=4000)
    w = sub.add_parser("worker")
    w.add_argument("--n", type=int, default=4000)
    w.add_argument("--profiler", action="store_true")
    w.add_argument("--settle", type=float, default=0.0)
    w.add_argument("--window", action="store_true")
    a = ap.parse_args()
    (bench if a.cmd == "bench" else worker)(a)


if __name__ == "__main__":
    main()
