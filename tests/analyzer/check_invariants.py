#!/usr/bin/env python3
"""check_invariants.py — what must hold of `gputrace report --json` on EVERY recorded trace, whatever
the diagnosis (issue 29 item 3): the report's figures are possible.

    check_invariants.py GPUTRACE DATA_DIR CORPUS_DIR WORKDIR

Every tests/data/*.gtrace and every run folder of tests/data/corpus/*.tar.xz (unpacked under
WORKDIR) is reported, and for each:
  - every share is between 0 and 100% (advice items, verdict causes, phases);
  - a saving is at most what it is a share of (its base: the mean steady step, the steady window,
    the run), and its severity is the one its share gives (docs/advice.md);
  - per process, the savings on one basis add up to no more than their base, and those out of the
    GPU's idle time to no more than the steady idle time (no double counting);
  - the steady idle time is at most the step (or window) it is per, and its causes add up to it;
  - phases are at most the run, and add up to it.
Prints one line per trace; exits 1 when anything fails, naming the trace, process and figures.
"""
import json
import os
import subprocess
import sys
import tarfile

EPS = 1e-3  # JSON keeps 6 significant digits
CRITICAL, WARNING, MINOR = 25.0, 5.0, 1.0  # docs/advice.md, advice.h


def close_le(a, b, rel=1e-4):
    return a <= b + EPS + rel * abs(b)


def expected_severity(a):
    impact = a["impact"]
    if impact == "failure":
        return "critical"
    if impact == "risk":
        return "warning"
    share = a.get("share_pct")
    if impact == "note" or share is None or a.get("saving_bound") or share < WARNING:
        return "info"
    return "critical" if share >= CRITICAL else "warning"


def check_advice(rep, errors):
    for a in rep["advice"]:
        who = f"{a['id']} pid {a['pid']}"
        share, saving, base = a.get("share_pct"), a.get("estimated_saving_ms"), a.get("base_ms")
        if a["impact"] == "time":
            if share is None or saving is None or base is None or a.get("saving_basis") is None:
                errors.append(f"{who}: a time finding without share, saving, base or basis")
                continue
            if not (-EPS <= share <= 100 + EPS):
                errors.append(f"{who}: share {share}%")
            if not close_le(saving, base):
                errors.append(f"{who}: saving {saving} ms over its base {base} ms")
            if a["minor"] != (share < MINOR):
                errors.append(f"{who}: minor {a['minor']} at {share}%")
            if not a.get("saving_source"):
                errors.append(f"{who}: no source for its figure")
        elif share is not None or saving is not None:
            errors.append(f"{who}: a {a['impact']} with a share or saving")
        if a["severity"] != expected_severity(a):
            errors.append(f"{who}: {a['severity']} at {share}% ({a['impact']}), "
                          f"expected {expected_severity(a)}")


def check_processes(rep, errors):
    by_pid = {p["pid"]: p for p in rep["processes"] if "gpu" in p}
    for pid, p in by_pid.items():
        gpu = p["gpu"]
        base = gpu.get("steady_base_ms", 0)
        idle = gpu.get("steady_idle_ms_per_step", 0)
        causes = sum(c["steady_ms_per_step"] for c in gpu["idle_by_cause"].values())
        if base > 0:
            if not close_le(idle, base):
                errors.append(f"pid {pid}: steady idle {idle} ms per step over its {base} ms")
            if not close_le(causes, base):
                errors.append(f"pid {pid}: idle causes {causes} ms per step over its {base} ms")
        if idle > 0 and not close_le(min(causes, base), idle, 1e-3):
            errors.append(f"pid {pid}: idle causes {causes} ms, idle {idle} ms per step")
        run_ms = p["duration_ms"]
        phases = p.get("phase_totals") or {}
        total = 0
        for kind, t in phases.items():
            ms = t.get("ms")
            if ms is None:
                continue
            total += ms
            if not close_le(ms, run_ms):
                errors.append(f"pid {pid}: phase {kind} {ms} ms in a {run_ms} ms run")
        if phases and abs(total - run_ms) > 1e-3 * run_ms + 0.1:
            errors.append(f"pid {pid}: phases add up to {total} ms of a {run_ms} ms run")
        # the savings of each basis, out of this process's time (merged items count once, at
        # the rank whose figures they carry)
        sums, idle_sum, bases = {}, 0.0, {}
        for a in rep["advice"]:
            if a["pid"] != pid or a.get("estimated_saving_ms") is None:
                continue
            sums[a["saving_basis"]] = sums.get(a["saving_basis"], 0) + a["estimated_saving_ms"]
            bases[a["saving_basis"]] = a["base_ms"]
        for basis, total_saving in sums.items():
            if not close_le(total_saving, bases[basis]):
                errors.append(f"pid {pid}: {basis} savings add up to {total_saving} ms, over "
                              f"their {bases[basis]} ms")


def check_verdict(rep, errors):
    v = rep.get("verdict")
    if not v:
        return
    for c in v["causes"] + v.get("minor", []):
        share = c.get("share_pct")
        if share is not None and not (-EPS <= share <= 100 + EPS):
            errors.append(f"verdict {c['id']}: share {share}%")
    for ph in v["phases"]:
        if not (-EPS <= ph["share_pct"] <= 100 + EPS):
            errors.append(f"verdict phase {ph['phase']}: {ph['share_pct']}%")
    base = v.get("step_mean_ms") or v.get("steady_window_ms") or 0
    idle = v.get("steady_idle_ms", 0)
    causes = sum(v["steady_idle_ms_per_step"].values())
    if base > 0 and not close_le(idle, base):
        errors.append(f"verdict: idle {idle} ms over its {base} ms base")
    if base > 0 and not close_le(causes, base):
        errors.append(f"verdict: idle causes {causes} ms over its {base} ms base")
    # the verdict lists what the advice lists, in its order
    ids = [c["id"] for c in v["causes"]]
    listed = [a["id"] for a in rep["advice"] if not a["minor"] and a["impact"] != "note"]
    if sorted(ids) != sorted(listed[:len(ids)]) and len(ids) < 8:
        errors.append(f"verdict causes {ids}, advice {listed}")


def check_report(rep):
    errors = []
    check_advice(rep, errors)
    check_processes(rep, errors)
    check_verdict(rep, errors)
    return errors


def self_test():
    """The checks can fail: a report with impossible figures is caught, a possible one is not."""
    good = {"advice": [{"id": "sync-stall", "pid": 1, "impact": "time", "severity": "warning",
                        "share_pct": 10.0, "estimated_saving_ms": 1.0, "base_ms": 10.0,
                        "saving_basis": "per_step", "minor": False, "saving_bound": False,
                        "saving_source": "idle after the waits"}],
            "processes": [{"pid": 1, "duration_ms": 100.0,
                           "phase_totals": {"steady": {"ms": 100.0}},
                           "gpu": {"steady_base_ms": 10.0, "steady_idle_ms_per_step": 4.0,
                                   "idle_by_cause": {"cuda_call": {"steady_ms_per_step": 4.0}}}}],
            "verdict": None}
    if check_report(good):
        sys.exit(f"FAIL: self-test: a possible report fails: {check_report(good)}")
    bad = json.loads(json.dumps(good))
    bad["advice"][0].update(share_pct=120.0, estimated_saving_ms=12.0, severity="info")
    bad["processes"][0]["gpu"]["idle_by_cause"]["host_work"] = {"steady_ms_per_step": 14.0}
    bad["processes"][0]["phase_totals"]["jit"] = {"ms": 140.0}
    errors = check_report(bad)
    if len(errors) < 5:
        sys.exit(f"FAIL: self-test: impossible figures not all caught: {errors}")


def check(gputrace, path, label):
    p = subprocess.run([gputrace, "report", "--json", path], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, GPUTRACE_PEAKS="off"))
    if p.returncode not in (0, 1):  # 1: a damaged file, reported as far as it reads
        return [f"report --json exited {p.returncode}: {p.stderr[-500:]}"]
    rep = json.loads(p.stdout)
    errors = check_report(rep)
    n = len(rep["advice"])
    print(f"{'FAIL' if errors else 'ok'} {label}: {len(rep['processes'])} processes, {n} advice")
    return errors


def corpus_runs(corpus, work):
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".tar.xz"):
            continue
        case = name[:-len(".tar.xz")]
        dest = os.path.join(work, case)
        if not os.path.isdir(dest):
            os.makedirs(dest)
            with tarfile.open(os.path.join(corpus, name)) as t:
                if hasattr(tarfile, "data_filter"):
                    t.extractall(dest, filter="data")
                else:
                    t.extractall(dest)
        for root, dirs, files in os.walk(dest):
            if any(f.endswith(".gtrace") for f in files):
                yield f"corpus/{case}", root
                dirs[:] = []


def main():
    gputrace, data, corpus, work = sys.argv[1:5]
    self_test()
    os.makedirs(work, exist_ok=True)
    failed = 0
    traces = [(f"data/{f}", os.path.join(data, f)) for f in sorted(os.listdir(data))
              if f.endswith(".gtrace")]
    traces += list(corpus_runs(corpus, work)) if os.path.isdir(corpus) else []
    if not traces:
        sys.exit("FAIL: no trace to check")
    for label, path in traces:
        errors = check(gputrace, path, label)
        for e in errors:
            print(f"  {label}: {e}")
        failed += bool(errors)
    print(f"{len(traces)} traces, {failed} failing")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
