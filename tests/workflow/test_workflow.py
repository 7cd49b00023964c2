#!/usr/bin/env python3
"""The user's workflow, end to end on the fake CUDA libraries: `gputrace record`, LD_PRELOAD with
forked children, and NVTX ranges.

Usage: test_workflow.py CASE --bin-dir B --lib L --fakes F --app A --dump D --nvtx-lib N
                        --empty-lib E --work W
Each CASE is one ctest test; it asserts on the .gtrace files through wf_dump's output.
"""
import argparse
import ctypes  # noqa: F401  (the python-fork case runs this file's child code in a subprocess)
import glob
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

ARGS = None


# Processes a failing case ends first: ctest waits for whatever holds its output.
LEFT_RUNNING = []


def fail(msg):
    print("FAIL: " + msg)
    for pid in LEFT_RUNNING:
        try:
            os.kill(pid() if callable(pid) else pid, signal.SIGKILL)
        except (OSError, TypeError, ValueError, IndexError):
            pass
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def base_env(preload=False):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("NVTX_INJECTION64_PATH", None)
    env.pop("GPUTRACE_DIR", None)
    env["LD_LIBRARY_PATH"] = ARGS.fakes + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["GPUTRACE_FLUSH_MS"] = "50"
    env["GPUTRACE_QUIET"] = "1"
    # A sanitized gputrace started with the user's LD_PRELOAD (record_environment) would refuse to
    # run because the ASan runtime is not first; the check is about link order, not about us.
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    if preload:
        env["LD_PRELOAD"] = ARGS.lib
    return env


def fresh_dir(name):
    path = os.path.join(ARGS.work, name)
    subprocess.run(["rm", "-rf", path], check=True)
    os.makedirs(path)
    return path


def gputrace(args, env, cwd, **kw):
    return subprocess.run([os.path.join(ARGS.bin_dir, "gputrace")] + args, env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, **kw)


def traces_in(folder):
    return sorted(glob.glob(os.path.join(folder, "*.gtrace")))


def dump(path):
    """Parsed wf_dump output: header dict, kind counts, nvtx tuples, thread names."""
    out = subprocess.run([ARGS.dump, path], capture_output=True, text=True, timeout=60)
    check(out.returncode == 0, "wf_dump %s failed: %s" % (path, out.stderr))
    info = {"header": {}, "kinds": {}, "nvtx": [], "threads": [], "lost": 0}
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts[0] == "header":
            info["header"] = dict(p.split("=") for p in parts[1:])
        elif parts[0] == "kind":
            info["kinds"][parts[1]] = int(parts[2])
        elif parts[0] == "nvtx":
            info["nvtx"].append({"tid": parts[1], "kind": parts[2], "name": parts[3],
                                 "domain": parts[4], "color": parts[5], "range": parts[6]})
        elif parts[0] == "thread":
            info["threads"].append((parts[1], parts[2]))
        elif parts[0] == "lost":
            info["lost"] = int(parts[1])
        elif parts[0] == "end":
            info["end"] = dict(p.split("=") for p in parts[1:])
    return info


def api_records(info):
    return sum(n for k, n in info["kinds"].items() if k.startswith("api"))


def record_run(name, app_args, env=None, extra=()):
    """`gputrace record -o NAME -- wf_app ARGS` in a fresh folder; returns (result, run folder)."""
    work = fresh_dir(name)
    env = env or base_env()
    res = gputrace(["record", "-q", "-o", "run"] + list(extra) + ["--", ARGS.app] + app_args,
                   env, work)
    return res, work


def expect_outputs(work, res, min_files=1):
    run = os.path.join(work, "run.gputrace")
    files = traces_in(run)
    check(len(files) >= min_files, "expected >= %d .gtrace in %s, got %s\nstderr:\n%s"
          % (min_files, run, files, res.stderr))
    perfetto = os.path.join(work, "run.perfetto-trace")
    check(os.path.isfile(perfetto) and os.path.getsize(perfetto) > 0,
          "record did not write %s\nstdout:\n%s\nstderr:\n%s" % (perfetto, res.stdout, res.stderr))
    return files


# ------------------------------------------------------------------------------------- cases

def case_record_exit_zero():
    res, work = record_run("exit0", ["exit", "0"])
    check(res.returncode == 0, "exit 0 gave %d: %s" % (res.returncode, res.stderr))
    files = expect_outputs(work, res)
    info = dump(files[0])
    check(api_records(info) >= 5, "expected the app's CUDA calls in the trace: %s" % info["kinds"])
    check("ui.perfetto.dev" in res.stderr, "record should say where to open the trace")


def case_record_prints_verdict():
    """record prints the verdict and the advice, not the whole report (issue 32): the full report
    and the page are written beside the trace, and the last lines say where each is."""
    res, work = record_run("verdict", ["exit", "0"], extra=["--capture", "all"])
    check(res.returncode == 0, "exit 0 gave %d: %s" % (res.returncode, res.stderr))
    expect_outputs(work, res)
    out = res.stdout
    check(out.startswith("== verdict: pid "), "the verdict first:\n" + out)
    # this tiny app may fire no rule (the verdict then says so): the advice section is printed
    # exactly when there is advice, and never with its evidence
    no_advice = "causes       no rule fired" in out
    check(("\nadvice\n  [" in out) != no_advice and "evidence:" not in out,
          "the advice, when there is any, without its evidence:\n" + out)
    for section in ("== run ==", "== kernels ==", "== API calls =="):
        check(section not in out, "record printed the full report's %s:\n%s" % (section, out))
    lines = (out + res.stderr).splitlines()
    check(len(lines) <= 40, "%d lines printed:\n%s%s" % (len(lines), out, res.stderr))
    check(all(len(l) <= 100 for l in out.splitlines()), "a line wider than 100 columns:\n" + out)
    report = os.path.join(work, "run.report.txt")
    page = os.path.join(work, "run.html")
    check(os.path.isfile(report) and os.path.isfile(page), "record did not write %s and %s"
          % (report, page))
    with open(report, encoding="utf-8") as f:
        text = f.read()
    check(text.startswith("== verdict:") and "== kernels ==" in text and
          ("evidence:" in text) != no_advice,
          "the full report in run.report.txt:\n" + text[:2000])
    with open(page, encoding="utf-8") as f:
        check('<script id="gt-data" type="application/json">{' in f.read(), "the page's data")
    check("full report  run.report.txt" in res.stderr and "run.html" in res.stderr and
          "timeline     run.perfetto-trace" in res.stderr, "where the outputs are:\n" + res.stderr)


def case_record_exit_three():
    res, work = record_run("exit3", ["exit", "3"])
    check(res.returncode == 3, "exit 3 gave %d: %s" % (res.returncode, res.stderr))
    expect_outputs(work, res)


def case_record_killed_by_signal():
    res, work = record_run("killed", ["kill", str(int(signal.SIGTERM))])
    check(res.returncode == 128 + signal.SIGTERM,
          "SIGTERM death gave %d: %s" % (res.returncode, res.stderr))
    check("signal" in res.stderr, "record should say the program was killed: " + res.stderr)
    files = expect_outputs(work, res)
    check(api_records(dump(files[0])) >= 1, "a killed program's records should still be there")


def case_record_environment():
    work = fresh_dir("env")
    env = base_env()
    env["LD_PRELOAD"] = ARGS.empty_lib
    out = os.path.join(work, "env.txt")
    res = gputrace(["record", "-q", "-o", "run", "--no-report", "--", ARGS.app, "env", out], env,
                   work)
    check(res.returncode == 0, "env run failed: %s" % res.stderr)
    seen = dict(line.rstrip("\n").split("=", 1) for line in open(out))
    lib = os.path.realpath(ARGS.lib)
    check(seen["LD_PRELOAD"] == lib + ":" + ARGS.empty_lib,
          "LD_PRELOAD should be ours first, the user's kept: %r" % seen["LD_PRELOAD"])
    check(seen["GPUTRACE_DIR"] == os.path.realpath(os.path.join(work, "run.gputrace")),
          "GPUTRACE_DIR should be the run folder: %r" % seen["GPUTRACE_DIR"])
    check(seen["NVTX_INJECTION64_PATH"] == lib, "NVTX path: %r" % seen["NVTX_INJECTION64_PATH"])
    # A user's own NVTX tool is never replaced.
    env["NVTX_INJECTION64_PATH"] = "/opt/their/tool.so"
    res = gputrace(["record", "-q", "-f", "-o", "run", "--no-report", "--", ARGS.app, "env", out],
                   env, work)
    seen = dict(line.rstrip("\n").split("=", 1) for line in open(out))
    check(seen["NVTX_INJECTION64_PATH"] == "/opt/their/tool.so", "user's NVTX tool replaced")


def case_record_usage():
    work = fresh_dir("usage")
    env = base_env()
    res = gputrace(["record", "--help"], env, work)
    check(res.returncode == 0 and "usage: gputrace record" in res.stdout, "record --help")
    res = gputrace(["record"], env, work)
    check(res.returncode == 2 and "no command" in res.stderr, "record without a command: %s"
          % res.stderr)
    os.makedirs(os.path.join(work, "taken.gputrace"))
    res = gputrace(["record", "-o", "taken", "--", ARGS.app, "exit", "0"], env, work)
    check(res.returncode == 2 and "already exists" in res.stderr,
          "an existing run folder must not be reused silently: %s" % res.stderr)
    res = gputrace(["record", "-q", "--no-report", "-o", "x", "--", "/no/such/program"], env, work)
    check(res.returncode == 127, "a missing program should give 127, got %d" % res.returncode)
    res = gputrace(["record", "--lib", "/no/such/lib.so", "--", ARGS.app, "exit", "0"], env, work)
    check(res.returncode == 2 and "/no/such/lib.so" in res.stderr, "bad --lib: %s" % res.stderr)


def case_record_fork():
    res, work = record_run("fork", ["fork"])
    check(res.returncode == 0, "fork run failed: %s" % res.stderr)
    files = expect_outputs(work, res, min_files=2)
    infos = [dump(f) for f in files]
    children = [i for i in infos if int(i["header"]["flags"]) & 1]
    parents = [i for i in infos if not int(i["header"]["flags"]) & 1]
    check(len(children) == 1 and len(parents) == 1,
          "one parent and one forked child file expected: %s" % [i["header"] for i in infos])
    child, parent = children[0], parents[0]
    check(child["header"]["ppid"] == parent["header"]["pid"], "child's ppid should be the parent")
    names = [n["name"] for n in child["nvtx"] if n["kind"] in ("push", "mark")]
    check(names == ["worker-batch", "worker-mark"], "child's NVTX: %s" % child["nvtx"])
    check(api_records(parent) >= 10, "parent's CUDA calls before and after fork: %s"
          % parent["kinds"])


def case_record_spawn():
    res, work = record_run("spawn", ["spawn"])
    check(res.returncode == 0, "spawn run failed: %s" % res.stderr)
    infos = [dump(f) for f in expect_outputs(work, res, min_files=2)]
    # Between fork and exec the child is a forked child: the core may leave a file for that
    # moment holding bookkeeping alone (strings, thread names, clock syncs). Only files with
    # recorded activity count.
    bookkeeping = {"string", "clock_sync", "thread", "module", "stack", "pad"}
    infos = [i for i in infos
             if sum(n for k, n in i["kinds"].items() if k not in bookkeeping) > 0]
    check(len(infos) == 2, "parent and spawned child: %d files with records" % len(infos))
    check(all(not int(i["header"]["flags"]) & 1 for i in infos),
          "an exec'd child is a new program, not a forked child: %s" % [i["header"] for i in infos])
    pids = {i["header"]["pid"] for i in infos}
    check(any(i["header"]["ppid"] in pids for i in infos), "the child's ppid names the parent")
    check(all(api_records(i) >= 5 for i in infos), "both traced fully: %s"
          % [i["kinds"] for i in infos])


def case_record_keeps_symbols():
    """record keeps the names of the captured frames in the run folder (gputrace-symbols.txt), so
    the run still names them where the program's binary is gone (another machine)."""
    work = fresh_dir("symbols")
    app = os.path.join(work, "moved", "wf_app_copy")
    os.makedirs(os.path.dirname(app))
    shutil.copy2(ARGS.app, app)
    env = base_env()
    res = gputrace(["record", "-q", "-o", "run", "--no-report", "--", app, "exit", "0"], env, work)
    check(res.returncode == 0, "record failed: %s" % res.stderr)
    archive = os.path.join(work, "run.gputrace", "gputrace-symbols.txt")
    check(os.path.isfile(archive), "no symbol archive in the run folder: %s" % res.stderr)
    with open(archive) as f:
        lines = f.read().splitlines()
    check(lines and lines[0] == "# gputrace symbols 1", "archive header: %s" % lines[:1])
    check(any(l.startswith("M\t") and l.endswith("\t" + app) for l in lines),
          "the copied program is a module of the archive:\n%s" % "\n".join(lines[:20]))
    check(any(l.startswith("F\t") and "\tcuda_work" in l for l in lines),
          "cuda_work, the program's function that syncs, is named:\n%s" % "\n".join(lines[:40]))
    os.remove(app)  # the binary is gone, as on another machine
    run = os.path.join(work, "run.gputrace")
    res = gputrace(["report", run], env, work)
    check(res.returncode == 0 and "cuda_work" in res.stdout,
          "report names the call site from the archive:\n%s%s" % (res.stdout, res.stderr))
    os.remove(archive)
    res = gputrace(["report", run], env, work)
    check("cuda_work" not in res.stdout and "[wf_app_copy+0x" in res.stdout,
          "without the archive the site is module+offset:\n%s" % res.stdout)


def case_archive_preloaded_run():
    """`gputrace archive FOLDER` keeps the names for a run recorded with LD_PRELOAD alone."""
    run_preloaded("archive", ["exit", "0"])
    work = os.path.join(ARGS.work, "archive")
    env = base_env()
    res = gputrace(["archive", work], env, work)
    check(res.returncode == 0 and "frames" in res.stdout, "archive: %s%s" % (res.stdout, res.stderr))
    with open(os.path.join(work, "gputrace-symbols.txt")) as f:
        text = f.read()
    check(text.startswith("# gputrace symbols 1\n") and "\tcuda_work" in text,
          "the preloaded run's frames are named:\n%s" % text[:2000])
    res = gputrace(["archive", os.path.join(work, "missing")], env, work)
    check(res.returncode == 1 and "missing" in res.stderr, "a missing folder: %s" % res.stderr)
    res = gputrace(["archive"], env, work)
    check(res.returncode == 2 and "usage" in res.stderr, "archive without a folder: %s" % res.stderr)


def case_record_sigint():
    work = fresh_dir("sigint")
    ready = os.path.join(work, "ready")
    proc = subprocess.Popen([os.path.join(ARGS.bin_dir, "gputrace"), "record", "-q", "-o", "run",
                             "--", ARGS.app, "wait-sigint", ready], env=base_env(), cwd=work,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not os.path.exists(ready) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    check(os.path.exists(ready), "the app never got ready")
    proc.send_signal(signal.SIGINT)  # to gputrace alone: it must pass it on
    out, err = proc.communicate(timeout=60)

    class Res:
        stdout, stderr = out, err
    check(proc.returncode == 130, "Ctrl-C'd app should exit 130 through record, got %d: %s"
          % (proc.returncode, err))
    files = expect_outputs(work, Res)
    info = dump(files[0])
    check(any(n["name"] == "waiting" for n in info["nvtx"]), "NVTX ranges before Ctrl-C missing")


# A Python program under `gputrace record` that counts the SIGINTs it gets as KeyboardInterrupts,
# until a SIGTERM (passed on by record, which the test sends once it saw the interrupt it expects)
# tells it to stop. A SIGINT passed on twice reaches it before that SIGTERM: record passes signals
# on one at a time, in order, and the lower-numbered of two pending signals is delivered first.
# A second interrupt arriving while the first is counted escapes (a traceback, status 1).
PY_SIGNAL_CHILD = textwrap.dedent("""\
    import ctypes, os, signal, sys, time
    log = open(sys.argv[1], "a", buffering=1)
    cudart = ctypes.CDLL("libcudart.so.13")
    dev = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(256)) == 0  # the trace starts
    log.write("pid %d\\n" % os.getpid())
    h = signal.getsignal(signal.SIGINT)
    log.write("handler %s\\n" % ("SIG_IGN" if h == signal.SIG_IGN else getattr(h, "__name__", h)))
    stop = False
    def on_term(sig, frame):
        global stop
        stop = True
    signal.signal(signal.SIGTERM, on_term)
    interrupts, said_ready = 0, False
    deadline = time.monotonic() + 100  # a ceiling: the test ends it long before
    while not stop and time.monotonic() < deadline:
        try:
            if not said_ready:
                said_ready = True
                log.write("ready\\n")
            while not stop and time.monotonic() < deadline:
                time.sleep(0.01)
        except KeyboardInterrupt:
            interrupts += 1
            log.write("interrupt %d\\n" % interrupts)
    cudart.cudaDeviceSynchronize()
    log.write("interrupts %d\\n" % interrupts)
""")


def wait_until(what, cond, ceiling=60):
    """Polls cond() until it holds; fails after ceiling seconds (a ceiling, not an expected time)."""
    deadline = time.monotonic() + ceiling
    while not cond():
        check(time.monotonic() < deadline, "%s: not within %d s" % (what, ceiling))
        time.sleep(0.02)


def log_lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def wait_exit(pid, ceiling=60):
    """The wait status of pid, reaped within ceiling seconds."""
    status = []
    def reaped():
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid:
            status.append(st)
        return bool(status)
    wait_until("process %d to end" % pid, reaped, ceiling)
    return os.waitstatus_to_exitcode(status[0])


def process_state(pid):
    """The state letter of /proc/PID/stat (R, S, T...)."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def signal_child_setup(name):
    work = fresh_dir(name)
    script = os.path.join(work, "child.py")
    with open(script, "w") as f:
        f.write(PY_SIGNAL_CHILD)
    log = os.path.join(work, "child.log")
    LEFT_RUNNING.append(lambda: int([l for l in log_lines(log) if l.startswith("pid ")][0][4:]))
    cmd = [os.path.join(ARGS.bin_dir, "gputrace"), "record", "-q", "-o", "run", "--no-report",
           "--", sys.executable, script, log]
    return work, log, cmd


def expect_one_interrupt(log, sender):
    """After one SIGINT: the child counted it, record passes SIGTERM on (sender), the child ends."""
    wait_until("the program's KeyboardInterrupt", lambda: "interrupt 1" in log_lines(log))
    sender(signal.SIGTERM)
    wait_until("the program's end", lambda: any(l.startswith("interrupts ") for l in log_lines(log)))
    lines = log_lines(log)
    check("interrupts 1" in lines, "one SIGINT should be one KeyboardInterrupt: %s" % lines)


def case_record_sigint_terminal():
    """Ctrl-C at a terminal reaches record and the program (one foreground process group): record
    does not pass its own on, so the program gets one KeyboardInterrupt, not two."""
    import pty
    work, log, cmd = signal_child_setup("sigint-terminal")
    env = base_env()
    try:
        pid, master = pty.fork()
    except OSError as e:
        print("(no pseudo-terminal here: %s; the terminal case is not checked)" % e)
        return
    if pid == 0:  # a new session whose controlling terminal is the pty; its group is in front
        os.chdir(work)
        os.execve(cmd[0], cmd, env)
    LEFT_RUNNING.append(pid)
    output = []
    def drain():  # the pty's buffer must not fill: record and the program write to it
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            output.append(data)
    import threading
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    wait_until("the program's start", lambda: "ready" in log_lines(log))
    check("handler default_int_handler" in log_lines(log),
          "Python under gputrace should keep its KeyboardInterrupt handler: %s" % log_lines(log))
    # record is stopped while Ctrl-C is typed, so that the program has certainly handled its
    # SIGINT before record sees its own: one passed on would then be a second KeyboardInterrupt
    # (close together, the kernel would merge the two and the test could not tell).
    os.kill(pid, signal.SIGSTOP)
    wait_until("record to stop", lambda: process_state(pid) == "T")
    os.write(master, b"\x03")  # Ctrl-C: the line discipline sends SIGINT to the foreground group
    wait_until("the program's KeyboardInterrupt", lambda: "interrupt 1" in log_lines(log))
    os.kill(pid, signal.SIGCONT)  # record now handles its pending SIGINT, then the SIGTERM below
    expect_one_interrupt(log, lambda sig: os.kill(pid, sig))
    rc = wait_exit(pid)
    check(rc == 0, "record: status %d\n%s" % (rc, b"".join(output).decode(errors="replace")))


def case_record_sigint_alone():
    """kill -INT of record alone (a harness, a job manager): passed on, one KeyboardInterrupt."""
    work, log, cmd = signal_child_setup("sigint-alone")
    with open(os.path.join(work, "out"), "w") as out:
        proc = subprocess.Popen(cmd, env=base_env(), cwd=work, stdout=out, stderr=out)
    LEFT_RUNNING.append(proc.pid)
    wait_until("the program's start", lambda: "ready" in log_lines(log))
    proc.send_signal(signal.SIGINT)
    expect_one_interrupt(log, proc.send_signal)
    check(proc.wait(timeout=60) == 0, "record: status %d" % proc.returncode)


def case_record_sigint_uncaught():
    """An uncaught KeyboardInterrupt: Python ends by SIGINT at its default action, which it sends
    itself after its finalization (gputrace's handler is gone by then); the trace still ends, by
    that signal, with the program's calls."""
    work, log, cmd = signal_child_setup("sigint-uncaught")
    script = cmd[-2]
    with open(script) as f:
        text = f.read()
    with open(script, "w") as f:  # the same program, with its KeyboardInterrupt left uncaught
        f.write(text.replace("except KeyboardInterrupt:", "except ZeroDivisionError:"))
    with open(os.path.join(work, "out"), "w") as out:
        proc = subprocess.Popen(cmd, env=base_env(), cwd=work, stdout=out, stderr=out)
    LEFT_RUNNING.append(proc.pid)
    wait_until("the program's start", lambda: "ready" in log_lines(log))
    proc.send_signal(signal.SIGINT)
    rc = proc.wait(timeout=60)
    with open(os.path.join(work, "out")) as f:
        out = f.read()
    check(rc == 130 and "KeyboardInterrupt" in out, "record: status %d\n%s" % (rc, out))
    files = traces_in(os.path.join(work, "run.gputrace"))
    check(len(files) == 1, "one trace expected: %s" % files)
    info = dump(files[0])
    check(info.get("end") == {"state": "0", "reason": "2", "signal": str(int(signal.SIGINT))},
          "the trace should end by SIGINT: %s" % info.get("end"))
    check(info["kinds"].get("api_alloc", 0) >= 1, "the program's calls: %s" % info["kinds"])


def case_record_sigint_ignored():
    """A script's background job starts with SIGINT ignored, and so does the program under it; a
    SIGINT sent to record is then passed on as SIGTERM, so that the run still ends when told."""
    work, log, cmd = signal_child_setup("sigint-ignored")
    pidfile = os.path.join(work, "pid")
    script = '"$@" >out 2>&1 & echo $! >pid; wait $!'
    shell = subprocess.Popen(["sh", "-c", script, "sh"] + cmd, env=base_env(), cwd=work)
    LEFT_RUNNING.append(shell.pid)
    wait_until("the program's start", lambda: "ready" in log_lines(log))
    check("handler SIG_IGN" in log_lines(log),
          "sh should start its background job with SIGINT ignored: %s" % log_lines(log))
    with open(pidfile) as f:
        record_pid = int(f.read())
    os.kill(record_pid, signal.SIGINT)
    wait_until("the program's end", lambda: any(l.startswith("interrupts ") for l in log_lines(log)))
    check(shell.wait(timeout=60) == 0, "record: status %d" % shell.returncode)
    with open(os.path.join(work, "out")) as f:
        out = f.read()
    check("passed on as SIGTERM" in out, "record should say what it did: %s" % out)
    check("interrupts 0" in log_lines(log), "SIGINT stays ignored: %s" % log_lines(log))


def nvtx_sequence(info):
    return [(n["kind"], n["name"], n["domain"]) for n in info["nvtx"]]


def run_preloaded(name, app_args, env=None):
    work = fresh_dir(name)
    env = env or base_env(preload=True)
    env["GPUTRACE_DIR"] = work
    res = subprocess.run([ARGS.app] + app_args, env=env, cwd=work, capture_output=True,
                         text=True, timeout=60)
    check(res.returncode == 0, "%s failed: %s" % (app_args, res.stderr))
    files = traces_in(work)
    check(len(files) == 1, "one trace expected in %s, got %s" % (work, files))
    return dump(files[0])


def case_nvtx_ranges():
    info = run_preloaded("nvtx", ["nvtx"])
    seq = nvtx_sequence(info)
    expected = [
        ("thread", "main-thread", "-"),
        ("push", "outer", "-"), ("push", "inner", "-"), ("mark", "tick", "-"), ("pop", "-", "-"),
        ("push", "colored", "-"), ("pop", "-", "-"), ("pop", "-", "-"),
        ("start", "async-range", "-"), ("end", "-", "-"),
        ("push", "registered-name", "my-domain"), ("pop", "-", "my-domain"),
    ]
    check(seq == expected, "NVTX records:\n  got      %s\n  expected %s" % (seq, expected))
    colored = [n for n in info["nvtx"] if n["name"] == "colored"][0]
    check(colored["color"] == "ff00ff00", "ARGB color lost: %s" % colored)
    start = [n for n in info["nvtx"] if n["kind"] == "start"][0]
    end = [n for n in info["nvtx"] if n["kind"] == "end"][0]
    check(start["range"] == end["range"] and start["range"] != "0", "start/end ids must match")
    tids = {n["tid"] for n in info["nvtx"]}
    check(len(tids) == 1, "all on the calling thread: %s" % tids)
    check(("%s" % list(tids)[0], "main-thread") in info["threads"],
          "nvtxNameOsThreadA should name the thread: %s" % info["threads"])


def case_nvtx_not_injected_when_disabled():
    env = base_env(preload=True)
    env["GPUTRACE_NVTX"] = "0"
    info = run_preloaded("nvtx-off", ["nvtx"], env)
    check(info["nvtx"] == [], "GPUTRACE_NVTX=0 should leave NVTX alone: %s" % info["nvtx"][:3])
    check(api_records(info) >= 5, "CUDA calls still recorded with NVTX off")


def case_nvtx_many_names():
    info = run_preloaded("nvtx-many", ["many-names", "6000"])
    pushes = [n for n in info["nvtx"] if n["kind"] == "push"]
    check(len(pushes) + info["lost"] >= 6000, "pushes: %d (+%d lost)" % (len(pushes), info["lost"]))
    distinct = {n["name"] for n in pushes}
    check("(many%20names)" in distinct, "names past the cap should fold into '(many names)'")
    check(4000 <= len(distinct) <= 4200, "the string table is capped near 4096: %d" % len(distinct))
    check(info["kinds"].get("string", 0) < 4500, "strings: %s" % info["kinds"].get("string"))


PY_CHILD = textwrap.dedent("""
    import ctypes, os, sys
    # torch loads its CUDA libraries with RTLD_LOCAL: do the same.
    cudart = ctypes.CDLL("libcudart.so.13", mode=os.RTLD_LOCAL | os.RTLD_NOW)
    nvtx = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LOCAL | os.RTLD_NOW)
    dev = ctypes.c_void_p()
    buf = ctypes.create_string_buffer(1 << 16)
    assert cudart.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(len(buf))) == 0
    for step in range(3):
        nvtx.wf_nvtx_push(b"step")
        cudart.cudaMemcpy(dev, buf, ctypes.c_size_t(len(buf)), 1)
        nvtx.wf_nvtx_pop()
    pid = os.fork()
    if pid == 0:  # a DataLoader worker: CPU work, NVTX, then os._exit (no atexit)
        for i in range(4):
            nvtx.wf_nvtx_push(b"load-batch")
            nvtx.wf_nvtx_pop()
        os._exit(0)  # gputrace's _exit writes the records first
    _, status = os.waitpid(pid, 0)
    cudart.cudaDeviceSynchronize()
    sys.exit(os.waitstatus_to_exitcode(status))
""")


def case_python_fork_worker():
    work = fresh_dir("python-fork")
    script = os.path.join(work, "loader.py")
    with open(script, "w") as f:
        f.write(PY_CHILD)
    env = base_env(preload=True)
    env["GPUTRACE_DIR"] = work
    res = subprocess.run([sys.executable, script, ARGS.nvtx_lib], env=env, cwd=work,
                         capture_output=True, text=True, timeout=60)
    check(res.returncode == 0, "python script failed: %s" % res.stderr)
    infos = [dump(f) for f in traces_in(work)]
    check(len(infos) == 2, "the python parent and its forked worker: %d files" % len(infos))
    child = [i for i in infos if int(i["header"]["flags"]) & 1]
    parent = [i for i in infos if not int(i["header"]["flags"]) & 1]
    check(len(child) == 1 and len(parent) == 1, "headers: %s" % [i["header"] for i in infos])
    steps = [n for n in parent[0]["nvtx"] if n["kind"] == "push"]
    check([n["name"] for n in steps] == ["step"] * 3, "parent's steps: %s" % steps)
    check(parent[0]["kinds"].get("api_memcpy", 0) == 3,
          "the ctypes RTLD_LOCAL cudaMemcpy calls: %s" % parent[0]["kinds"])
    loads = [n for n in child[0]["nvtx"] if n["kind"] == "push"]
    check([n["name"] for n in loads] == ["load-batch"] * 4,
          "the worker's file must hold its records despite os._exit: %s" % child[0]["nvtx"])


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(CASES))
    for opt in ("bin-dir", "lib", "fakes", "app", "dump", "nvtx-lib", "empty-lib", "work"):
        p.add_argument("--" + opt, required=True)
    ARGS = p.parse_args()
    for opt in ("bin_dir", "lib", "fakes", "app", "dump", "nvtx_lib", "empty_lib", "work"):
        setattr(ARGS, opt, os.path.abspath(getattr(ARGS, opt)))
    os.makedirs(ARGS.work, exist_ok=True)
    CASES[ARGS.case]()
    print("ok " + ARGS.case)


if __name__ == "__main__":
    main()
