#!/usr/bin/env python3
"""The headline overhead method (issue 18): what a user sees when the whole process is traced.

Each run is a fresh process (train_overhead.py's worker: a torchvision model, synthetic data, SGD,
one torch.cuda.synchronize() per step), pinned to the same cores as every other run. The
configurations are interleaved: every round runs each configuration once, in a new shuffled order,
so the machine's drift (±15% between processes on the H200 machine) falls on all of them alike.
A process's figure is the median of its steady steps (warm-up excluded); a configuration's figure
is the median over its processes, with the lowest and highest beside it. The ratio to untraced is
given two ways: median over median, and the median of the per-round ratios (each round's run
against that round's untraced run), with their range.

    whole_process.py bench --lib LIB --out DIR [--model resnet18 --batch 4] [--procs 5]
                           [--configs untraced,default,...] [--cpus 0-7] [--budget-s 480]
    whole_process.py configs        # the configurations and what each isolates

The in-process paired method (paired_overhead.py) is a diagnostic: its untraced blocks still have
libgputrace.so loaded and CUPTI attached, so it cannot see what attaching costs.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.environ.get("GT_WP_WORKER", os.path.join(HERE, "train_overhead.py"))  # tests: a stand-in

# name -> (environment for the traced process (None: not preloaded), extra worker args, what it isolates)
CONFIGS = {
    "untraced": (None, [], "no gputrace"),
    "loaded": ({"GPUTRACE_DISABLE": "1"}, [], "libgputrace.so loaded, recording nothing"),
    "wrappers": ({"GPUTRACE_CUPTI": "0"}, [], "the wrappers and the writer, no CUPTI"),
    "cupti_attached": ({"GPUTRACE_CUPTI_KINDS": "none", "GPUTRACE_CUPTI_CALLBACKS": "0"}, [],
                       "wrappers + CUPTI loaded and its buffers registered: no kind, no callback"),
    "callbacks": ({"GPUTRACE_CUPTI_KINDS": "none"}, [],
                  "wrappers + CUPTI's callbacks (copies, sets, graphs, anchors), no record kind"),
    "kernels": ({"GPUTRACE_CUPTI_KINDS": "kernel", "GPUTRACE_CUPTI_CALLBACKS": "0"}, [],
                "wrappers + kernel records, no callback"),
    "kernels_copies": ({"GPUTRACE_CUPTI_KINDS": "kernel,memcpy,memset",
                        "GPUTRACE_CUPTI_CALLBACKS": "0"}, [],
                       "wrappers + kernel, copy and set records, no callback"),
    "records": ({"GPUTRACE_CUPTI_CALLBACKS": "0"}, [], "every record kind, no callback"),
    "default": ({}, [], "gputrace as users run it"),
    "default_stacks_off": ({"GPUTRACE_STACKS": "off"}, [], "default without call-site stacks"),
    "default_flush_1s": ({"GPUTRACE_FLUSH_MS": "1000", "GPUTRACE_BUFFER_KB": "16384"}, [],
                         "default, writer waking 5x less often with 4x larger buffers"),
    "paused": ({"GPUTRACE_CAPTURE": "profiler-api"}, [],
               "capture range never started: CUPTI attached, kinds and callbacks disabled"),
    # issue 18 items 3-4: the ways to bound the cost, idle or recording
    "paused_signal": ({"GPUTRACE_CAPTURE": "signal"}, [],
                      "on-demand capture armed (SIGUSR2), never signalled: recording paused"),
    "paused_trigger": ({"GPUTRACE_CAPTURE": "trigger-file:/nonexistent/gputrace-go"}, [],
                       "trigger-file capture armed, the file never appears: recording paused"),
    "flight_30s": ({"GPUTRACE_FLIGHT_RECORDER": "30"}, [],
                   "flight recorder: everything recorded, the last 30 s kept in memory"),
    "sample_2_8": ({"GPUTRACE_SAMPLE": "2/8"}, [],
                   "calls all along, CUPTI's records 2 s of every 10 s"),
    "no_hw_trace": ({"GPUTRACE_CUPTI_HW_TRACE": "0"}, [],
                    "default without asking for hardware-event kernel timestamps"),
    "sample_05_45": ({"GPUTRACE_SAMPLE": "0.5/4.5", "GPUTRACE_CUPTI_DETACH": "1"}, [],
                     "calls all along, CUPTI attached 0.5 s of every 5 s (detached between)"),
    "sample_05_45_keep": ({"GPUTRACE_SAMPLE": "0.5/4.5"}, [],
                          "calls all along, CUPTI's kinds on 0.5 s of every 5 s (the default: "
                          "CUPTI stays attached, kinds off between)"),
    "torch_profiler": (None, ["--profiler"], "torch.profiler (CPU + CUDA activities)"),
    # not gputrace: tools/bench/cupti_floor.c, the least a CUPTI kernel tracer does (--floor)
    "cupti_floor": (None, [], "a minimal CUPTI client recording kernels, no gputrace"),
}
NOT_PRELOADED_ENV = {"cupti_floor": {"CUDA_INJECTION64_PATH": "@floor@"}}
MODELS = {"resnet18": (4, 20, 100), "resnet50": (64, 10, 40)}  # batch, warm-up, measured steps


def parse_cpus(text):
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def run_one(cfg, a, cpus):
    env_add, extra_args, _ = CONFIGS[cfg]
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    tmp = None
    if env_add is not None:
        tmp = tempfile.mkdtemp(prefix="gtwp-")
        env.update(LD_PRELOAD=a.lib, GPUTRACE_DIR=tmp, GPUTRACE_QUIET="1", **env_add)
    for k, v in NOT_PRELOADED_ENV.get(cfg, {}).items():
        if not a.floor:
            sys.exit(f"{cfg} needs --floor PATH/libcupti_floor.so")
        env[k] = v.replace("@floor@", os.path.abspath(a.floor))
        if a.cupti_lib:
            env["CUPTI_FLOOR_LIB"] = a.cupti_lib
    batch, warmup, steps = MODELS[a.model]
    args = [sys.executable, WORKER, "worker", "--model", a.model, "--batch", str(a.batch or batch),
            "--warmup", str(a.warmup or warmup), "--steps", str(a.steps or steps), *extra_args]
    t0 = time.time()
    p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=a.timeout,
                       preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    wall = time.time() - t0
    result = next((json.loads(l[7:]) for l in p.stdout.splitlines() if l.startswith("RESULT ")), None)
    trace_bytes = 0
    if tmp:
        for f in os.listdir(tmp):
            trace_bytes += os.path.getsize(os.path.join(tmp, f))
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)
    if result is None:
        sys.stderr.write(f"{cfg}: rc={p.returncode}\n{p.stderr[-1500:]}\n")
        return None
    return {"median_ms": statistics.median(result["step_ms"]), "min_ms": min(result["step_ms"]),
            "wall_s": round(wall, 1), "trace_bytes": trace_bytes}


def summarize(runs, rounds, configs):
    base = [r["median_ms"] for r in runs.get("untraced", [])]
    base_med = statistics.median(base) if base else None
    rows = []
    for cfg in configs:
        meds = [r["median_ms"] for r in runs.get(cfg, [])]
        if not meds:
            rows.append((cfg, 0, None, None, None, None, None, None))
            continue
        med = statistics.median(meds)
        ratio = med / base_med if base_med else None
        paired = [rd[cfg]["median_ms"] / rd["untraced"]["median_ms"] for rd in rounds
                  if rd.get(cfg) and rd.get("untraced")]
        rows.append((cfg, len(meds), med, min(meds), max(meds), ratio,
                     statistics.median(paired) if paired else None,
                     (min(paired), max(paired)) if paired else None))
    return rows


def fmt_pct(r):
    return "-" if r is None else f"{(r - 1) * 100:+.1f}%"


def bench(a):
    os.makedirs(a.out, exist_ok=True)
    configs = [c for c in a.configs.split(",") if c]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        sys.exit(f"whole_process.py: unknown configurations {unknown}; see 'configs'")
    if "untraced" not in configs:
        configs.insert(0, "untraced")
    cpus = parse_cpus(a.cpus)
    rng = random.Random(a.seed)
    runs, rounds = {}, []
    t_start = time.time()
    for rnd in range(a.procs):
        if rnd and (time.time() - t_start) / rnd * (rnd + 1) > a.budget_s:
            print(f"budget: stopping after {rnd} rounds", flush=True)
            break
        order = configs[:]
        rng.shuffle(order)
        this = {}
        for cfg in order:
            r = run_one(cfg, a, cpus)
            if r:
                runs.setdefault(cfg, []).append(r)
                this[cfg] = r
            print(f"round {rnd} {cfg}: " + (f"{r['median_ms']:.2f} ms (wall {r['wall_s']} s)" if r
                                             else "failed"), flush=True)
        rounds.append(this)
    rows = summarize(runs, rounds, configs)
    batch = a.batch or MODELS[a.model][0]
    lines = [f"# Whole-process overhead: {a.model} b{batch}, {len(rounds)} interleaved rounds, "
             f"cores {a.cpus} ({time.strftime('%Y-%m-%d %H:%M')})", "",
             "Per process: the median of its steady steps. Per configuration: the median over "
             "processes [lowest–highest]; vs untraced as median/median and as the median of "
             "per-round ratios [range].", "",
             "| config | procs | median step ms [range] | vs untraced | per-round ratio [range] | "
             "trace KB/proc | what it isolates |", "|---|---|---|---|---|---|---|"]
    for cfg, n, med, lo, hi, ratio, paired, prange in rows:
        if not n:
            lines.append(f"| {cfg} | 0 | - | - | - | - | {CONFIGS[cfg][2]} |")
            continue
        kb = statistics.median(r["trace_bytes"] for r in runs[cfg]) / 1024
        pr = f"{fmt_pct(paired)} [{fmt_pct(prange[0])} … {fmt_pct(prange[1])}]" if paired else "-"
        lines.append(f"| {cfg} | {n} | {med:.2f} [{lo:.2f}–{hi:.2f}] | {fmt_pct(ratio)} | {pr} | "
                     f"{kb:.0f} | {CONFIGS[cfg][2]} |")
    raw = {cfg: [round(r["median_ms"], 3) for r in rs] for cfg, rs in runs.items()}
    lines += ["", "Raw per-process medians (ms, in run order): " + json.dumps(raw)]
    text = "\n".join(lines) + "\n"
    tag = f"{a.model}_b{batch}"
    with open(os.path.join(a.out, f"whole_process_{tag}.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, f"whole_process_{tag}.json"), "w") as f:
        json.dump({"model": a.model, "batch": batch, "cpus": a.cpus, "rounds": rounds}, f)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("configs")
    b = sub.add_parser("bench")
    b.add_argument("--lib", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--model", default="resnet18", choices=sorted(MODELS))
    b.add_argument("--batch", type=int, default=0)
    b.add_argument("--warmup", type=int, default=0)
    b.add_argument("--steps", type=int, default=0)
    b.add_argument("--procs", type=int, default=5, help="processes per configuration (rounds)")
    b.add_argument("--configs", default="untraced,default,torch_profiler")
    b.add_argument("--cpus", default="0-7")
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--budget-s", type=float, default=480)
    b.add_argument("--timeout", type=float, default=180)
    b.add_argument("--floor", help="libcupti_floor.so (tools/bench/cupti_floor.c), for cupti_floor")
    b.add_argument("--cupti-lib", help="the libcupti the floor loads when none is mapped")
    a = ap.parse_args()
    if a.cmd == "configs":
        for name, (_, _, what) in CONFIGS.items():
            print(f"{name:20} {what}")
        return
    a.lib = os.path.abspath(a.lib)
    bench(a)


if __name__ == "__main__":
    main()
