#!/usr/bin/env python3
"""`gputrace convert --ranks` on the recorded multi-rank runs of the corpus (issue 33 item 4).

    test_convert_ranks.py GPUTRACE WORKDIR CASE...

For each CASE (a run folder of several ranks in tests/data/corpus/CASE.tar.xz): the timeline of
`--ranks slowest` holds exactly the processes of the rank `gputrace report --json` names the
straggler (and, for the straggler_* runs, the rank the recording slowed: its name ends in _rN or
_rN_sync); `--ranks fastest` the rank that waits longest per step at the collectives;
`--ranks slowest,fastest,0` their union; a list of numbers those ranks; what was kept and left out
is said on stderr and in the trace; a rank the run lacks and a bad list exit with status 2 and
write nothing. The output's processes are read from the JSON sink (its process_name events).
"""
import json
import os
import re
import subprocess
import sys

from test_corpus import unpack


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def rank_pids(run_dir):
    """rank -> set of pids, from the file names (gputrace-HOST-PID-rankN.gtrace)."""
    by_rank = {}
    for name in os.listdir(run_dir):
        m = re.match(r"gputrace-.*-(\d+)-rank(\d+)\.gtrace$", name)
        if m:
            by_rank.setdefault(int(m.group(2)), set()).add(int(m.group(1)))
    return by_rank


def converted_pids(gputrace, run_dir, out, choice):
    r = run([gputrace, "convert", "--no-advice", "--format=json", "--ranks", choice, "-o", out,
             run_dir])
    if r.returncode != 0:
        raise AssertionError(f"--ranks {choice}: exit {r.returncode}: {r.stderr}")
    with open(out) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    notes = [e for e in events if e.get("name") == "ranks chosen by convert --ranks"]
    return pids, r.stderr, notes


def check_choice(gputrace, run_dir, work, choice, ranks, by_rank):
    out = os.path.join(work, "ranks.json")
    pids, err, notes = converted_pids(gputrace, run_dir, out, choice)
    want = set().union(*(by_rank[r] for r in ranks))
    assert pids == want, f"--ranks {choice}: processes {sorted(pids)}, expected {sorted(want)}"
    kept = ",".join(str(r) for r in sorted(ranks))  # the ranks here are never consecutive runs
    said = re.search(r"ranks kept: ([0-9,-]+)", err)
    assert said, f"--ranks {choice}: stderr does not say the ranks kept: {err}"
    expand = set()
    for part in said.group(1).split(","):
        lo, _, hi = part.partition("-")
        expand.update(range(int(lo), int(hi or lo) + 1))
    assert expand == set(ranks), f"--ranks {choice}: said kept {said.group(1)}, expected {kept}"
    left = sorted(set(by_rank) - set(ranks))
    if left:
        assert "left out: " in err and "left out: none" not in err, err
    assert len(notes) == 1, f"--ranks {choice}: {len(notes)} notes in the trace"
    print(f"--ranks {choice}: kept ranks {sorted(ranks)} ({len(pids)} processes)")


def check_errors(gputrace, run_dir, work, by_rank):
    out = os.path.join(work, "bad.json")
    missing = max(by_rank) + 1
    for bad, words in ((str(missing), f"rank {missing} is not in these traces"),
                       ("1-", "is not a rank"), ("x", "is not a rank"), ("3-1", "ends before"),
                       ("0,,1", "empty item"), ("slowest,", "empty item")):
        r = run([gputrace, "convert", "--no-advice", "--ranks", bad, "-o", out, run_dir])
        assert r.returncode == 2, f"--ranks {bad}: exit {r.returncode}, expected 2"
        assert words in r.stderr, f"--ranks {bad}: unclear message {r.stderr!r}"
        assert not os.path.exists(out), f"--ranks {bad}: an output was written"


def check_case(gputrace, work, case):
    case_dir = unpack(work, case)
    run_dir = os.path.join(case_dir, case, "run")
    by_rank = rank_pids(run_dir)
    assert len(by_rank) >= 2, f"{case}: {len(by_rank)} ranks"
    r = run([gputrace, "report", "--json", run_dir])
    report = json.loads(r.stdout)
    straggler = report["straggler"]
    assert straggler, f"{case}: the report names no straggler"
    slowest = straggler["rank"]
    named = re.search(r"_r(\d+)(_sync)?$", case)
    if named:
        assert slowest == int(named.group(1)), f"{case}: the report's straggler is {slowest}"
    fastest = min((-x["wait_ms_per_step"], x["rank"]) for x in report["ranks"])[1]
    check_choice(gputrace, run_dir, work, "slowest", [slowest], by_rank)
    check_choice(gputrace, run_dir, work, "fastest", [fastest], by_rank)
    check_choice(gputrace, run_dir, work, "slowest,fastest,0", sorted({slowest, fastest, 0}),
                 by_rank)
    others = sorted(by_rank)[1::2]
    check_choice(gputrace, run_dir, work, ",".join(map(str, others)), others, by_rank)
    check_errors(gputrace, run_dir, work, by_rank)


def main():
    gputrace, work, cases = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    for case in cases:
        print(f"== {case}")
        check_case(gputrace, work, case)
    print("ok")


if __name__ == "__main__":
    main()
