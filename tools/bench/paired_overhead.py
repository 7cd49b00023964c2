#!/usr/bin/env python3
"""Paired (within-process) training-step overhead — a DIAGNOSTIC, not the headline figure.

Its untraced blocks run with libgputrace.so loaded and CUPTI attached (kinds disabled), so it
cannot see what attaching and the whole process cost: the figure users see comes from
whole_process.py (docs/evidence/performance-log.md, "Whole-process overhead").

On the shared GPU machine the step time of one configuration moves by ±15% from process to
process (CPU placement, clocks), more than the effect measured on launch-bound models. Here each
process alternates blocks of steps traced and not traced, so both sides share the process, its
cores and its memory:
  gputrace configurations: libgputrace.so preloaded with GPUTRACE_CAPTURE=profiler-api, blocks
    bracketed by torch.cuda.profiler.start()/stop() (cudaProfilerStart/Stop): outside the range the
    library records nothing and CUPTI is switched off;
  torch_profiler: blocks inside `with torch.profiler.profile(...)`, the others plain.
Block order ABBA (drift cancels); the first step of every block is left out (transitions). Per
process: median traced step / median untraced step; over processes: the median of the ratios.

    paired_overhead.py bench --lib LIB --out DIR [--models resnet18,resnet50] [--procs 3]
    paired_overhead.py worker --model resnet18 --batch 4 --mode gputrace|torch_profiler
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = {"resnet18": (4, 15), "resnet50": (64, 8)}  # batch, warm-up steps
CONFIGS = {
    "gputrace": {},
    "gputrace_stacks_off": {"GPUTRACE_STACKS": "off"},
    "gputrace_cb_off": {"GPUTRACE_CUPTI_CALLBACKS": "0"},
    "gputrace_cupti_off": {"GPUTRACE_CUPTI": "0"},
    "gputrace_cb_runtime": {"GPUTRACE_CUPTI_CALLBACKS": "runtime"},
    "gputrace_cb_probe": {"GPUTRACE_CUPTI_CALLBACKS": "probe"},
    # the earlier defaults: kernels' queued timestamps; a callback pair on every launch
    "gputrace_queued": {"GPUTRACE_CUPTI_LINK": "queued"},
    "gputrace_launch_callbacks": {"GPUTRACE_CUPTI_LINK": "callbacks"},
    "gputrace_cb_all": {"GPUTRACE_CUPTI_CALLBACKS": "1"},
    # what linking costs: no queued timestamps, no anchors, no launch callbacks
    "gputrace_no_links": {"GPUTRACE_CUPTI_LINK": "callbacks", "GPUTRACE_CUPTI_CALLBACKS": "probe"},
    "torch_profiler": None,
}


def worker(a):
    if a.cpus:  # the training threads on fixed cores: less placement noise between the blocks
        lo, _, hi = a.cpus.partition("-")
        os.sched_setaffinity(0, range(int(lo), int(hi or lo) + 1))
    import torch
    import torchvision
    dev = torch.device("cuda")
    model = getattr(torchvision.models, a.model)().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    crit = torch.nn.CrossEntropyLoss()
    x = torch.randn(a.batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (a.batch,), device=dev)

    def step():
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) * 1e3

    for _ in range(a.warmup):
        step()
    times = {"traced": [], "plain": []}
    pattern = [False, True, True, False]  # ABBA
    for b in range(a.blocks):
        traced = pattern[b % 4]
        prof = None
        if traced and a.mode == "torch_profiler":
            from torch.profiler import ProfilerActivity, profile
            prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            prof.__enter__()
        elif traced:
            torch.cuda.profiler.start()
        for i in range(a.block + 1):
            ms = step()
            if i:
                times["traced" if traced else "plain"].append(ms)
        if prof:
            prof.__exit__(None, None, None)
        elif traced:
            torch.cuda.profiler.stop()
    print("RESULT " + json.dumps(times), flush=True)


def run(model, config, a):
    batch, warmup = MODELS[model]
    args = [sys.executable, os.path.abspath(__file__), "worker", "--model", model, "--batch",
            str(batch), "--warmup", str(warmup), "--block", str(a.block), "--blocks", str(a.blocks),
            "--mode", "torch_profiler" if config == "torch_profiler" else "gputrace",
            "--cpus", a.cpus]
    lib, name = (a.alt_lib, config[4:]) if config.startswith("alt:") else (a.lib, config)
    return run_worker(args, lib, CONFIGS[name], f"{model}/{config}")


def run_worker(args, lib, config_env, label, timeout=400):
    """One worker process: under lib with the capture range and config_env (None: untraced).
    Returns its RESULT json (None on failure, said on stderr) and the trace's size in KB."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="gtpair-") as tmp:
        if config_env is not None:
            env.update(LD_PRELOAD=lib, GPUTRACE_DIR=tmp, GPUTRACE_QUIET="1",
                       GPUTRACE_CAPTURE="profiler-api", **config_env)
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
        kb = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp)) / 1024
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), kb
    sys.stderr.write(f"{label}: rc={p.returncode}\n{p.stderr[-1500:]}\n")
    return None, 0


def bench(a):
    os.makedirs(a.out, exist_ok=True)
    configs = [c for c in a.configs.split(",") if c]
    res = {}
    for model in a.models.split(","):
        for rep in range(a.procs):
            order = configs[rep % len(configs):] + configs[:rep % len(configs)]
            for config in order:
                t, kb = run(model, config, a)
                if not t:
                    continue
                tr, pl = statistics.median(t["traced"]), statistics.median(t["plain"])
                res.setdefault((model, config), []).append((tr / pl, tr, pl, kb))
                print(f"{model} {config} rep {rep}: traced {tr:.2f} ms, plain {pl:.2f} ms, "
                      f"ratio {tr / pl:.3f}", flush=True)
    lines = [f"# Paired step overhead ({a.procs} processes per row, blocks of {a.block} steps, "
             f"{a.blocks} blocks ABBA; {time.strftime('%Y-%m-%d %H:%M')})", "",
             "| model | config | processes | traced step ms | plain step ms | overhead (median) | "
             "per process |", "|---|---|---|---|---|---|---|"]
    for (model, config), v in res.items():
        med = statistics.median(x[0] for x in v)
        lines.append(f"| {model} b{MODELS[model][0]} | {config} | {len(v)} | "
                     f"{statistics.median(x[1] for x in v):.2f} | "
                     f"{statistics.median(x[2] for x in v):.2f} | {100 * (med - 1):+.1f}% | "
                     + ", ".join(f"{100 * (x[0] - 1):+.1f}%" for x in v) + " |")
    with open(os.path.join(a.out, "paired.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--lib", required=True)
    b.add_argument("--alt-lib", default="", help="the library for configs named alt:CONFIG")
    b.add_argument("--out", required=True)
    b.add_argument("--models", default="resnet18")
    b.add_argument("--configs", default="gputrace,gputrace_stacks_off,gputrace_cb_off,"
                   "gputrace_cupti_off,torch_profiler")
    b.add_argument("--procs", type=int, default=3)
    b.add_argument("--block", type=int, default=10)
    b.add_argument("--blocks", type=int, default=8)
    b.add_argument("--cpus", default="", help="pin the training threads, e.g. 2-5 (default: no)")
    w = sub.add_parser("worker")
    w.add_argument("--model", default="resnet18")
    w.add_argument("--batch", type=int, default=4)
    w.add_argument("--warmup", type=int, default=15)
    w.add_argument("--block", type=int, default=10)
    w.add_argument("--blocks", type=int, default=8)
    w.add_argument("--mode", default="gputrace")
    w.add_argument("--cpus", default="")
    a = ap.parse_args()
    (bench if a.cmd == "bench" else worker)(a)


if __name__ == "__main__":
    main()
