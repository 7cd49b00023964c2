#!/usr/bin/env python3
"""The same answers from per-rank summaries as from the merged traces (issue 33 item 3), on the
recorded multi-rank runs of the corpus: ddp_gloo_slow and the straggler matrix (straggler_*).

    test_summaries.py GPUTRACE WORKDIR

For each run: `report --json RUN` reads every rank's trace in one process; `report --summary` of
each trace alone writes its summary, and `report --json *.summary.json` analyses those. Both must
name the same straggler rank (or none), with the same collective kind, steps, collectives counted
and those it was last at, and its lateness and the others' wait within 2% (0.05 ms).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "corpus")
CASES = ["ddp_gloo_slow"] + sorted(os.path.basename(p)[:-len(".tar.xz")]
                                   for p in glob.glob(os.path.join(DATA, "straggler_*.tar.xz")))


def unpack(case, work):
    dest = os.path.join(work, case)
    shutil.rmtree(dest, ignore_errors=True)
    with tarfile.open(os.path.join(DATA, case + ".tar.xz")) as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(dest, filter="data")
        else:
            t.extractall(dest)
    runs = glob.glob(os.path.join(dest, "**", "run"), recursive=True)
    return runs[0]


def close(a, b):
    return abs(a - b) <= max(0.05, 0.02 * max(abs(a), abs(b)))


def compare(gputrace, run_dir):
    merged = json.loads(subprocess.run([gputrace, "report", "--json", run_dir],
                                       capture_output=True, text=True).stdout)["straggler"]
    summaries = []
    for trace in sorted(glob.glob(os.path.join(run_dir, "*.gtrace"))):
        out = trace[:-len(".gtrace")] + ".summary.json"
        p = subprocess.run([gputrace, "report", "--summary", "-o", out, trace],
                           capture_output=True, text=True)
        if p.returncode not in (0, 1):
            return "summary of %s: exit %d %s" % (trace, p.returncode, p.stderr)
        summaries.append(out)
    p = subprocess.run([gputrace, "report", "--json"] + summaries, capture_output=True, text=True)
    if p.returncode != 0:
        return "report of the summaries: exit %d %s" % (p.returncode, p.stderr)
    from_sum = json.loads(p.stdout)["straggler"]
    if not merged or not from_sum:
        return None if merged == from_sum else "straggler merged %s, from summaries %s" % (
            merged, from_sum)
    same = ("rank", "kind", "per_step", "steps", "collectives", "last_at_collectives",
            "last_in_steps")
    diff = [k for k in same if merged[k] != from_sum[k]]
    diff += [k for k in ("lateness_ms", "others_wait_ms", "period_ms")
             if not close(merged[k], from_sum[k])]
    if diff:
        return "differ in %s: merged %s, from summaries %s" % (diff, merged, from_sum)
    print("  rank %d late %.2f ms a step (merged %.2f), %d steps" % (
        from_sum["rank"], from_sum["lateness_ms"], merged["lateness_ms"], from_sum["steps"]))
    return None


def main():
    gputrace, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    failures = 0
    for case in CASES:
        print(case)
        err = compare(gputrace, unpack(case, work))
        if err:
            print("FAIL %s: %s" % (case, err))
            failures += 1
    print("%d of %d runs differ" % (failures, len(CASES)))
    return 1 if failures or len(CASES) < 2 else 0


if __name__ == "__main__":
    sys.exit(main())
