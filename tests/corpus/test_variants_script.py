#!/usr/bin/env python3
"""tools/gpu/corpus_variants.sh and tools/gpu/import_corpus.py without a GPU, on the script's
selftest group: a run that passes, one that fails, one that times out, and wf_app on the fake CUDA
libraries recorded with libgputrace.so. The script must give each run its own timeout, go on past
failures, keep each case's command and output, pack each case in the layout of tests/data/corpus
and bundle the archives; with no budget left it must skip the runs and say how to run them; the
import must take in the whole recorded run and refuse the failed ones by name, keep what is
already there unless --force.

    test_variants_script.py REPO LIB WF_APP FAKES WORK
"""
import io
import os
import shutil
import subprocess
import sys
import tarfile


def check(cond, msg):
    if not cond:
        sys.exit("FAIL: " + msg)


def script_env(work, lib, app, fakes, budget):
    env = dict(os.environ)
    for var in ("LD_PRELOAD", "GPUTRACE_DIR", "NVTX_INJECTION64_PATH"):
        env.pop(var, None)
    env.update(OUT=os.path.join(work, "out"), CORPUS_WORK=os.path.join(work, "w"),
               CORPUS_LIB=lib, CORPUS_SELFTEST_APP=app, CORPUS_BUDGET_S=str(budget),
               PYTHON=sys.executable, GPUTRACE_QUIET="1", GPUTRACE_FLUSH_MS="50",
               LD_LIBRARY_PATH=fakes + (":" + env["LD_LIBRARY_PATH"]
                                        if env.get("LD_LIBRARY_PATH") else ""))
    return env


def run(cmd, env=None, expect=0):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    check(p.returncode == expect, "%s exited %d, expected %d\n%s\n%s" % (
        " ".join(cmd), p.returncode, expect, p.stdout[-3000:], p.stderr[-3000:]))
    return p.stdout


def members(data):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:xz") as t:
        return {m.name: (t.extractfile(m).read() if m.isfile() else None) for m in t.getmembers()}


def check_bundle(out):
    """The selftest bundle: every case packed, each in the tests/data/corpus layout."""
    bundle = os.path.join(out, "corpus_selftest_1.tar")
    check(os.path.isfile(bundle), "no bundle %s: %s" % (bundle, os.listdir(out)))
    with tarfile.open(bundle) as t:
        cases = {m.name[: -len(".tar.xz")]: t.extractfile(m).read() for m in t.getmembers()}
    check(set(cases) == {"st_ok", "st_fail", "st_timeout", "st_app"}, "bundle holds %s" % cases)
    for case, data in cases.items():
        names = members(data)
        for f in ("cmd.txt", "traced.out", "traced.err"):
            check("%s/%s" % (case, f) in names, "%s lacks %s: %s" % (case, f, sorted(names)))
    check(b"failing on purpose" in members(cases["st_fail"])["st_fail/traced.err"],
          "st_fail's stderr was not kept")
    check("st_ok/untraced.out" in members(cases["st_ok"]), "st_ok's baseline was not kept")
    app = members(cases["st_app"])
    check(any(n.startswith("st_app/run/") and n.endswith(".gtrace") for n in app),
          "st_app has no trace: %s" % sorted(app))
    return bundle, cases


def check_summary(out):
    with open(os.path.join(out, "corpus_selftest.txt")) as f:
        summary = f.read()
    for line in ("== st_ok untraced: rc=0", "== st_ok traced: rc=0", "== st_fail traced: rc=3",
                 "== st_timeout traced: rc=124", "== st_app traced: rc=0",
                 "traced CORPUS name=st_ok"):
        check(line in summary, "summary lacks %r:\n%s" % (line, summary))


def check_import(repo, bundle, cases, work):
    """Whole runs in, failed ones refused by name, kept unless --force."""
    data = os.path.join(work, "data")
    tool = [sys.executable, os.path.join(repo, "tools", "gpu", "import_corpus.py"), "--data", data]
    text = run(tool + [bundle], expect=1)  # st_fail and st_timeout printed no CORPUS line
    for case in ("st_fail", "st_timeout"):
        check("refused  " + case in text, "%s not refused:\n%s" % (case, text))
    check("imported st_app" in text, "st_app not imported:\n%s" % text)
    with open(os.path.join(data, "st_app.tar.xz"), "rb") as f:
        check(f.read() == cases["st_app"], "st_app.tar.xz differs from the bundle's")
    again = run(tool + ["--only", "st_app", bundle])
    check("kept     st_app" in again and "0 imported" in again, "not kept:\n" + again)
    forced = run(tool + ["--only", "st_app", "--force", bundle])
    check("1 imported" in forced, "--force did not replace:\n" + forced)
    listed = run(tool + ["--list", "--only", "st_app,st_nosuch", bundle], expect=1)
    check("case     st_app" in listed and "missing  st_nosuch" in listed, listed)


def main():
    repo, lib, app, fakes, work = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    script = ["bash", os.path.join(repo, "tools", "gpu", "corpus_variants.sh")]
    listing = run(script + ["list"])
    for group in ("g29", "g30", "selftest"):
        check("group %s:" % group in listing, "list lacks group %s" % group)
    run(script + ["no_such_case"], env=script_env(work, lib, app, fakes, 300), expect=2)

    run(script + ["selftest"], env=script_env(work, lib, app, fakes, 300))
    out = os.path.join(work, "out")
    check_summary(out)
    bundle, cases = check_bundle(out)
    check_import(repo, bundle, cases, work)

    # No budget: nothing runs, and the summary says what to run next.
    shutil.rmtree(out)
    run(script + ["st_ok,st_fail"], env=script_env(work, lib, app, fakes, 0))
    with open(os.path.join(out, "corpus_cases.txt")) as f:
        summary = f.read()
    check("skipped (no library or budget spent): st_ok st_fail" in summary and
          "corpus_variants.sh st_ok,st_fail" in summary, summary)
    check(not [f for f in os.listdir(out) if f.endswith(".tar")], "bundles without runs")
    print("PASS corpus_variants.sh selftest and import_corpus.py")


if __name__ == "__main__":
    main()
