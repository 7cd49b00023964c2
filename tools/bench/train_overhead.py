#!/usr/bin/env python3
"""GPU benchmark of issue 4 item 8: training step time of torchvision ResNet-50 (batch 64) and
ResNet-18 (batch 4) untraced, under gputrace's default configuration (LD_PRELOAD), under the default
with GPUTRACE_STACKS=off (what call-site capture costs), under GPUTRACE_API=full and under
torch.profiler. Each configuration runs in a fresh process; the
configurations are interleaved (rotated order in every repeat) because the machine is shared and
its speed drifts. Warm-up steps are excluded. Results: a markdown table with the median and the
minimum of the per-process median step times and their ratios to untraced.

    train_overhead.py bench  --lib build-gpu/lib/libgputrace.so --out DIR [--repeats 3] [--budget-s 260]
    train_overhead.py counts --lib build-gpu/lib/libgputrace.so --out DIR
        per-kind counts of a few ResNet-50 steps from gputrace's .gtrace, next to the PyTorch
        profiler's kernel/memcpy/memset counts for the same steps in a second, identical process
    train_overhead.py worker --model resnet50 --batch 64 --warmup 10 --steps 50 [--profiler]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# name, batch, warm-up, measured. ResNet-18 steps are few ms: 60 measured keep the run within the
# time the four original configurations took once a fifth (stacks off) joined them.
MODELS = [("resnet50", 64, 10, 50), ("resnet18", 4, 15, 60)]
# GT_BENCH_MODELS=resnet18 runs a subset of the models.
MODELS = [m for m in MODELS if m[0] in os.environ.get("GT_BENCH_MODELS", "resnet50,resnet18").split(",")]
ALL_CONFIGS = ["untraced", "gputrace", "gputrace_stacks_off", "gputrace_cupti_off",
               "gputrace_api_full", "torch_profiler"]
# Also accepted in GT_BENCH_CONFIGS (breakdowns): gputrace_disabled (loaded, recording nothing),
# gputrace_cb_off (CUPTI records without the correlation callbacks).
# GT_BENCH_CONFIGS=untraced,gputrace,... runs a subset (fewer fresh processes when time is short).
CONFIGS = [c for c in os.environ.get("GT_BENCH_CONFIGS", ",".join(ALL_CONFIGS)).split(",") if c]


def profiler_context():
    from torch.profiler import ProfilerActivity, profile
    kw = {}
    try:
        from torch._C._profiler import _ExperimentalConfig
        kw["experimental_config"] = _ExperimentalConfig(enable_cuda_sync_events=True)
    except Exception:
        pass
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **kw)


def count_chrome_trace(path):
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    cats, memcpy = {}, {}
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        cats[cat] = cats.get(cat, 0) + 1
        if cat == "gpu_memcpy":
            memcpy[e.get("name", "?")] = memcpy.get(e.get("name", "?"), 0) + 1
    return {"categories": cats, "memcpy": memcpy}


def worker(a):
    import torch
    import torchvision
    prof = profiler_context() if a.profiler else None
    if prof:
        prof.__enter__()  # before any CUDA work, so both counting runs see the same operations
    dev = torch.device("cuda")
    model = getattr(torchvision.models, a.model)().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    crit = torch.nn.CrossEntropyLoss()
    x = torch.randn(a.batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (a.batch,), device=dev)
    times = []
    for i in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = crit(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if i >= a.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    result = {"step_ms": times}
    if prof and a.count_json:
        prof.__exit__(None, None, None)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            prof.export_chrome_trace(path)
            result["profiler"] = count_chrome_trace(path)
    print("RESULT " + json.dumps(result), flush=True)
    if prof and not a.count_json:
        os._exit(0)  # the profiler's post-processing at exit is not part of a step


def run_worker(model, batch, warmup, steps, config, lib, extra_env=None, extra_args=(), timeout=240):
    env = dict(os.environ)
    args = [sys.executable, os.path.abspath(__file__), "worker", "--model", model, "--batch",
            str(batch), "--warmup", str(warmup), "--steps", str(steps), *extra_args]
    tmp = None
    if config.startswith("gputrace"):
        tmp = tempfile.mkdtemp(prefix="gtbench-")
        env.update(LD_PRELOAD=lib, GPUTRACE_DIR=tmp, GPUTRACE_QUIET="1")
        if config == "gputrace_api_full":
            env["GPUTRACE_API"] = "full"
        if config == "gputrace_stacks_off":
            env["GPUTRACE_STACKS"] = "off"
        if config == "gputrace_cupti_off":  # the wrappers alone: what CUPTI costs is the rest
            env["GPUTRACE_CUPTI"] = "0"
        if config == "gputrace_cb_off":  # CUPTI records, no linking callbacks
            env["GPUTRACE_CUPTI_CALLBACKS"] = "0"
        if config == "gputrace_disabled":  # merely loaded
            env["GPUTRACE_DISABLE"] = "1"
    if config == "torch_profiler":
        args.append("--profiler")
    env.update(extra_env or {})
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout)
    result = None
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
    trace_bytes = 0
    if tmp:
        for f in os.listdir(tmp):
            trace_bytes += os.path.getsize(os.path.join(tmp, f))
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    if result is None:
        sys.stderr.write(f"{model}/{config}: rc={p.returncode}\n{p.stderr[-2000:]}\n")
    return result, trace_bytes


def bench(a):
    os.makedirs(a.out, exist_ok=True)
    runs = {}  # (model, config) -> list of (median, min, trace bytes)
    t_start = time.time()
    done = 0
    for rep in range(a.repeats):
        if rep > 0 and time.time() - t_start > a.budget_s * rep / a.repeats * 1.15:
            break  # the machine is slower than planned: keep whole repeats only
        for model, batch, warmup, steps in MODELS:
            order = CONFIGS[rep % len(CONFIGS):] + CONFIGS[:rep % len(CONFIGS)]
            for config in order:
                r, tb = run_worker(model, batch, warmup, steps, config, a.lib)
                if r:
                    runs.setdefault((model, config), []).append(
                        (statistics.median(r["step_ms"]), min(r["step_ms"]), tb / (warmup + steps)))
                print(f"rep {rep} {model} {config}: {statistics.median(r['step_ms']):.2f} ms" if r
                      else f"rep {rep} {model} {config}: failed", flush=True)
        done = rep + 1
    lines = [f"# Training step overhead ({done} interleaved repeats, fresh process per run; "
             f"{time.strftime('%Y-%m-%d %H:%M')})", "",
             "Per process: the median and the minimum of the measured steps (warm-up excluded). "
             "Below: the median and the minimum over processes, and ratios to untraced.", "",
             "| model | config | runs | median step ms | min step ms | median ratio | min ratio | trace KB/step |",
             "|---|---|---|---|---|---|---|---|"]
    for model, batch, warmup, steps in MODELS:
        base = runs.get((model, "untraced"))
        for config in CONFIGS:
            r = runs.get((model, config))
            if not r:
                lines.append(f"| {model} b{batch} | {config} | 0 | - | - | - | - | - |")
                continue
            med = statistics.median(x[0] for x in r)
            mn = min(x[1] for x in r)
            ratio_med = f"{med / statistics.median(x[0] for x in base):.3f}" if base else "-"
            ratio_min = f"{mn / min(x[1] for x in base):.3f}" if base else "-"
            kb = f"{statistics.median(x[2] for x in r) / 1024:.0f}" if config.startswith("gputrace") else "-"
            lines.append(f"| {model} b{batch} ({steps} steps) | {config} | {len(r)} | {med:.2f} | "
                         f"{mn:.2f} | {ratio_med} | {ratio_min} | {kb} |")
    lines += ["", "Raw per-process medians (ms): " + json.dumps(
        {f"{m}/{c}": [round(x[0], 2) for x in v] for (m, c), v in runs.items()})]
    with open(os.path.join(a.out, "overhead.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def counts(a):
    sys.path.insert(0, HERE)
    import gtrace_count
    os.makedirs(a.out, exist_ok=True)
    warmup, steps = 2, 3
    tdir = os.path.join(a.out, "resnet50_counts")
    os.makedirs(tdir, exist_ok=True)
    env = dict(os.environ, LD_PRELOAD=a.lib, GPUTRACE_DIR=tdir)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "worker", "--model", "resnet50",
                        "--batch", "64", "--warmup", str(warmup), "--steps", str(steps)],
                       env=env, capture_output=True, text=True, timeout=240)
    gt = [gtrace_count.count(os.path.join(tdir, f)) for f in sorted(os.listdir(tdir))
          if f.endswith(".gtrace")]
    prof, _ = run_worker("resnet50", 64, warmup, steps, "torch_profiler", a.lib,
                         extra_args=["--count-json"])
    lines = [f"# Per-kind counts, ResNet-50 b64, {warmup + steps} steps from process start", "",
             f"gputrace stderr: `{p.stderr.strip()[-300:]}`", ""]
    for c in gt:
        lines += [f"gputrace file {os.path.basename(c['file'])}: cupti {c['cupti_state']}, lost {c['lost']}",
                  "", "```", json.dumps(c, indent=1, sort_keys=True), "```", ""]
    if prof:
        lines += ["torch.profiler (same steps, separate process) — events by category and memcpy names:",
                  "", "```", json.dumps(prof.get("profiler"), indent=1, sort_keys=True), "```", ""]
        if gt:
            k = gt[0]["kinds"]
            pc = prof["profiler"]["categories"]
            lines += ["| what | gputrace | torch.profiler |", "|---|---|---|"]
            for ours, theirs in [("gpu_kernel", "kernel"), ("gpu_memcpy", "gpu_memcpy"),
                                 ("gpu_memset", "gpu_memset"), ("gpu_sync", "cuda_sync")]:
                lines.append(f"| {ours} / {theirs} | {k.get(ours, 0)} | {pc.get(theirs, 0)} |")
    with open(os.path.join(a.out, "counts.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker")
    w.add_argument("--model", default="resnet50")
    w.add_argument("--batch", type=int, default=64)
    w.add_argument("--warmup", type=int, default=10)
    w.add_argument("--steps", type=int, default=50)
    w.add_argument("--profiler", action="store_true")
    w.add_argument("--count-json", action="store_true")
    for name in ("bench", "counts"):
        s = sub.add_parser(name)
        s.add_argument("--lib", required=True)
        s.add_argument("--out", required=True)
        s.add_argument("--repeats", type=int, default=3)
        s.add_argument("--budget-s", type=float, default=260)
    a = ap.parse_args()
    if a.cmd != "worker":
        a.lib = os.path.abspath(a.lib)
    {"worker": worker, "bench": bench, "counts": counts}[a.cmd](a)


if __name__ == "__main__":
    main()
