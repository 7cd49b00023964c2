#!/usr/bin/env python3
"""Compare the full and the GPU-sampled recordings of tools/gpu/sampled_corpus.sh, here where the
analyzer is built: for each case, the run's exit status, the program's own median step
(its CORPUS line), the steps the report finds (count, median, source kind), the steady GPU busy
share and the kernel count of the full run against the sampled run's extrapolated one, and the
GPU-idle advice of each. Prints a markdown table.

    tools/gpu/sampled_compare.py GPUTRACE FULL_ROOT [SAMPLED_ROOT]

FULL_ROOT/<case>/full/ and SAMPLED_ROOT/<case>/sampled/ (SAMPLED_ROOT defaults to FULL_ROOT) are
the unpacked sc_*.tar.xz of one or two calls."""
import json
import os
import re
import subprocess
import sys


def report(gputrace, folder):
    env = dict(os.environ, GPUTRACE_PEAKS="off")
    out = subprocess.run([gputrace, "report", "--json", folder], capture_output=True, text=True,
                         env=env, timeout=600)
    if out.returncode != 0:
        return None
    data = json.loads(out.stdout)
    procs = [p for p in data.get("processes", []) if p.get("kernels", {}).get("count")]
    if not procs:
        return None
    # the process with the most GPU work is the program (DDP: rank 0 of the two, both alike)
    proc = max(procs, key=lambda p: p.get("kernels", {}).get("count", 0))
    return data, proc


def corpus_median(folder):
    try:
        text = open(os.path.join(folder, "out.txt")).read()
    except OSError:
        return "-"
    m = re.findall(r"^CORPUS .*?step_ms_median=([0-9.]+)", text, re.M)
    return "/".join(m) if m else "-"


def steps(proc):
    s = proc.get("steps") or {}
    if not s.get("count"):
        return "none"
    return f"{s['count']} × {s['median_ms']:.3f} ms ({s.get('step_source_kind', '?')})"


def idle_advice(data):
    ids = sorted(a["id"] for a in data.get("advice", []) if a["id"] in ("gpu-idle", "launch-bound"))
    return ",".join(ids) or "-"


def main():
    gputrace, full_root = sys.argv[1], sys.argv[2]
    sampled_root = sys.argv[3] if len(sys.argv) > 3 else full_root
    print("| program | own median ms full / sampled | full: steps | sampled: steps | steady GPU busy full / sampled | kernels full / sampled ≈ | GPU-idle advice full / sampled |")
    print("|---|---|---|---|---|---|---|")
    for case in sorted(os.listdir(full_root)):
        f, s = os.path.join(full_root, case, "full"), os.path.join(sampled_root, case, "sampled")
        if not (os.path.isdir(f) and os.path.isdir(s)):
            continue
        rf, rs = report(gputrace, f), report(gputrace, s)
        if not rf or not rs:
            print(f"| {case} | {corpus_median(f)} / {corpus_median(s)} | report failed | | | | |")
            continue
        (df, pf), (ds, ps) = rf, rs
        est = ps.get("gpu_sampling", {}).get("estimated_run_totals", {}).get("kernel_count")
        busy = lambda p: round(p.get("gpu", {}).get("steady_busy_pct") or 0, 1)
        print(f"| {case} | {corpus_median(f)} / {corpus_median(s)} | {steps(pf)} | {steps(ps)} | "
              f"{busy(pf)}% / {busy(ps)}% | {pf['kernels']['count']} / {round(est) if est else '-'} | "
              f"{idle_advice(df)} / {idle_advice(ds)} |")


if __name__ == "__main__":
    main()
