#!/usr/bin/env python3
"""Per-rank summaries and the cross-rank report from them (issue 33 items 1-3).

    test_summaries.py GPUTRACE REPO WORKDIR

1. Synthetic jobs of 64 ranks on 8 hosts (tools/gen_summaries.py, seeded), one per injected
   pattern: a fixed late rank, a late host, a late GPU ordinal on several hosts, a random rank per
   step, nobody. The report must name, in every step, the rank the generator made latest; the
   straggler for the fixed rank; and what lateness follows (rank, host, GPU, none) with its value.
2. Bad input: a damaged summary is named and the exit status is 2 while the others are still
   reported; a newer schema_version is refused; traces and summaries mixed is a usage error;
   diff says it compares traces.
3. `report --summary` of a recorded trace: the schema's fields, the steps and collectives of the
   trace's own report, and a few kilobytes.
"""
import json
import os
import shutil
import subprocess
import sys

SEED = 11
EXPECT = {"rank": ("rank", "rank"), "host": ("host", "host"), "gpu": ("gpu", "gpu"),
          "random": ("none", None), "none": ("none", None)}


def run(cmd, ok=(0,)):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in ok:
        raise AssertionError("%s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return p


def check_scenario(gputrace, repo, work, scenario):
    out = os.path.join(work, scenario)
    run([sys.executable, os.path.join(repo, "tools", "gen_summaries.py"), out, "--ranks", "64",
         "--per-host", "8", "--steps", "30", "--scenario", scenario, "--seed", str(SEED)])
    truth = json.load(open(os.path.join(out, "truth.json")))
    rep = json.loads(run([gputrace, "report", "--json", out]).stdout)
    errors = []
    if rep["rank_count"] != 64 or rep["host_count"] != 8 or rep["kind"] != "nccl":
        errors.append("ranks %s hosts %s kind %s" % (rep["rank_count"], rep["host_count"],
                                                     rep["kind"]))
    got = {s["step"]: s["rank"] for s in rep["steps"]}
    want = {t["step"]: t["rank"] for t in truth["steps"]}
    if got != want:
        wrong = [(k, got.get(k), v) for k, v in want.items() if got.get(k) != v]
        errors.append("steps' stragglers (step, named, injected): %s" % wrong[:5])
    what, key = EXPECT[scenario]
    fol = rep["follows"]
    if fol["what"] != what or (key and fol.get(key) != truth["follows"][key]):
        errors.append("follows %s, expected %s" % (fol, truth["follows"]))
    if scenario == "rank" and (rep["straggler"]["rank"] != truth["follows"]["rank"] or
                               not 4.5 <= rep["straggler"]["lateness_ms"] <= 5.5):
        errors.append("straggler %s, injected rank %d 5 ms late" % (rep["straggler"],
                                                                   truth["follows"]["rank"]))
    text = run([gputrace, "report", out]).stdout
    if what == "rank" and "Lateness follows rank %d" % truth["follows"]["rank"] not in text:
        errors.append("text: %s" % text[:400])
    return ["%s: %s" % (scenario, e) for e in errors]


def check_bad_input(gputrace, work):
    src = os.path.join(work, "rank")
    bad = os.path.join(work, "bad")
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(src, bad)
    errors = []
    with open(os.path.join(bad, "rank5.summary.json"), "r+") as f:
        f.truncate(2000)  # a summary cut short: not JSON any more
    p = run([gputrace, "report", "--json", bad], ok=(2,))
    rep = json.loads(p.stdout)
    if "rank5.summary.json" not in p.stderr or rep["inputs"]["unreadable"] != 1 or \
            rep["rank_count"] != 63:
        errors.append("damaged summary: %s %s" % (p.stderr, rep["inputs"]))
    newer = os.path.join(work, "newer.summary.json")
    doc = json.load(open(os.path.join(src, "rank1.summary.json")))
    doc["schema_version"] = 99
    json.dump(doc, open(newer, "w"))
    p = run([gputrace, "report", newer], ok=(2,))
    if "schema_version 99" not in p.stderr:
        errors.append("newer schema: %s" % p.stderr)
    p = run([gputrace, "report", newer, os.path.join(src, "rank2.summary.json"),
             os.path.join(os.path.dirname(work), "x.gtrace")], ok=(2,))
    if "not both" not in p.stderr:
        errors.append("mixed inputs: %s" % p.stderr)
    p = run([gputrace, "diff", newer, os.path.join(src, "rank2.summary.json")], ok=(2,))
    if "diff compares traces" not in p.stderr:
        errors.append("diff of summaries: %s" % p.stderr)
    return errors


def check_summary_of_trace(gputrace, data, work):
    trace = os.path.join(data, "healthy.gtrace")
    out = os.path.join(work, "healthy.summary.json")
    run([gputrace, "report", "--summary", "-o", out, trace])
    doc = json.load(open(out))
    rep = json.loads(run([gputrace, "report", "--json", trace]).stdout)
    proc = [p for p in rep["processes"] if p.get("kernels")][0]
    errors = []
    if doc["schema"] != "gputrace-summary" or doc["schema_version"] != 1:
        errors.append("schema %s %s" % (doc["schema"], doc["schema_version"]))
    s = doc["processes"][0]
    for key in ("host", "pid", "rank", "world_size", "gpu", "t0_ns", "steps", "collectives",
                "idle_ms"):
        if key not in s:
            errors.append("no %s in the summary" % key)
    if s.get("pid") != proc["pid"] or len(s["steps"]["rows"]) != proc["steps"]["count"]:
        errors.append("pid %s steps %d; the report: pid %s steps %s" % (
            s.get("pid"), len(s["steps"]["rows"]), proc["pid"], proc["steps"]["count"]))
    if any(len(r) != len(s["steps"]["columns"]) for r in s["steps"]["rows"]):
        errors.append("step rows do not have the columns' length")
    if os.path.getsize(out) > 64 * 1024:
        errors.append("%d bytes for one process" % os.path.getsize(out))
    p = run([gputrace, "report", out])
    if "1 rank" in p.stdout or "Straggler: rank" in p.stdout:
        errors.append("one process named a straggler: %s" % p.stdout)
    return errors


def main():
    gputrace, repo, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    errors = []
    for scenario in EXPECT:
        errors += check_scenario(gputrace, repo, work, scenario)
    errors += check_bad_input(gputrace, work)
    errors += check_summary_of_trace(gputrace, os.path.join(repo, "tests", "data"), work)
    for e in errors:
        print("FAIL", e)
    print("%d problem(s)" % len(errors))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
