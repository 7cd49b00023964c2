"""Call-site tests (issue 8): run small programs under LD_PRELOAD=libgputrace.so, read their trace
back with stack_dump (the analyzer's symbolizer) and check the frames.

usage: test_stacks.py <case> --lib libgputrace.so --dump stack_dump --bin-dir DIR --fake-dir DIR
       --src-dir DIR
Exit 77 = skipped (a part this case needs is not built)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def marker_line(path, name):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if "@" + name + " " in line or line.rstrip().endswith("@" + name) or \
                    "@" + name + " */" in line:
                return i
    raise AssertionError(f"marker @{name} not in {path}")


def run_traced(args, cmd, env_extra=None, allow_no_trace=False):
    out_dir = tempfile.mkdtemp(prefix="gt-stacks-")
    env = dict(os.environ)
    env.update({"LD_PRELOAD": args.lib, "GPUTRACE_DIR": out_dir, "GPUTRACE_QUIET": "1",
                "LD_LIBRARY_PATH": args.fake_dir + ":" + env.get("LD_LIBRARY_PATH", "")})
    env.update(env_extra or {})
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}: {p.stderr}")
    if allow_no_trace and not any(f.endswith(".gtrace") for f in os.listdir(out_dir)):
        shutil.rmtree(out_dir, ignore_errors=True)
        return p.stdout, parse_dump("")
    d = subprocess.run([args.dump, out_dir], capture_output=True, text=True, timeout=120)
    shutil.rmtree(out_dir, ignore_errors=True)
    if d.returncode != 0:
        raise AssertionError(f"stack_dump failed: {d.stderr}")
    return p.stdout, parse_dump(d.stdout)


def parse_dump(text):
    dump = {"stacks": {}, "api": [], "modules": []}
    for line in text.splitlines():
        w = line.split(" ")
        if w[0] == "stack":
            dump["stacks"][int(w[1])] = {"truncated": w[3] == "1", "frames": [],
                                         "callsite": line.split(" callsite ", 1)[1]}
        elif w[0] == "frame":
            st = dump["stacks"][int(w[1])]
            if w[3] == "py":
                st["frames"].append({"py": True, "file": w[4], "func": w[5], "line": int(w[6])})
            else:
                st["frames"].append({"py": False, "module": w[4], "func": w[5], "file": w[6],
                                     "line": int(w[7]), "offset": w[8]})
        elif w[0] == "chain":
            dump["stacks"][int(w[1])].setdefault("chain", []).append(line.split(" ", 2)[2])
        elif w[0] == "api":
            dump["api"].append((w[1], int(w[3])))
        elif w[0] == "module":
            dump["modules"].append(w[1])
        elif w[0] == "stack_records":
            dump["stack_records"] = int(w[1])
    return dump


def ids_from(stdout):
    return [(w.split()[0], int(w.split()[1])) for w in stdout.splitlines() if w.strip()]


def native_funcs(stack):
    return [f["func"] for f in stack["frames"] if not f["py"]]


def check_order(funcs, want):
    pos = -1
    for name in want:
        assert name in funcs[pos + 1:], f"{name} missing after position {pos} in {funcs}"
        pos = funcs.index(name, pos + 1)


def case_chain(args, exe="stacks_chain", env=None):
    out, dump = run_traced(args, [os.path.join(args.bin_dir, exe), "chain"], env)
    ids = ids_from(out)
    (c1, id1), (c2, id2), (c3, id3) = ids
    assert id1 != 0 and id1 == id2, f"one call site must give one stack id: {ids}"
    assert id3 != 0 and id3 != id1, f"another call site must give another id: {ids}"
    assert any(m.endswith(exe) for m in dump["modules"]), dump["modules"]
    st = dump["stacks"][id1]
    funcs = native_funcs(st)
    assert funcs[0] == "do_capture", f"gputrace's own frames must be skipped: {funcs}"
    check_order(funcs, ["do_capture", "step", "main"])
    src = os.path.join(args.src_dir, "chain_direct.c")
    for f in st["frames"][:3]:
        want = marker_line(src, f["func"])
        assert f["file"] == "chain_direct.c" and f["line"] == want, f"{f} (line {want})"
    assert st["callsite"] == f"chain_direct.c:{marker_line(src, 'do_capture')} in do_capture", st
    # The call site is the user's innermost frame: nothing of a library lies under it.
    assert st.get("chain") == [st["callsite"]], st.get("chain")
    assert not st["truncated"]
    return dump, id1


def case_fork(args):
    # A forked child writes its own file: its stacks and modules must be in it, not only in the
    # parent's file.
    out_dir = tempfile.mkdtemp(prefix="gt-stacks-")
    env = dict(os.environ, LD_PRELOAD=args.lib, GPUTRACE_DIR=out_dir, GPUTRACE_QUIET="1")
    p = subprocess.run([os.path.join(args.bin_dir, "stacks_chain"), "fork"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    ids = dict((w, int(i)) for w, i in (line.split() for line in p.stdout.splitlines()))
    traces = sorted(f for f in os.listdir(out_dir) if f.endswith(".gtrace"))
    assert len(traces) == 2, traces
    sites = []
    for t in traces:
        d = subprocess.run([args.dump, os.path.join(out_dir, t)], capture_output=True, text=True)
        assert d.returncode == 0, d.stderr
        dump = parse_dump(d.stdout)
        assert any(m.endswith("stacks_chain") for m in dump["modules"]), dump["modules"]
        sites += [st["callsite"] for st in dump["stacks"].values()]
    shutil.rmtree(out_dir, ignore_errors=True)
    assert ids["parent"] and ids["child"], ids
    assert sites.count(sites[0]) == 2 and sites[0].startswith("chain_direct.c:") and sites[0].endswith(" in do_capture"), sites


def case_threads(args):
    # 8 threads race through two call sites from scratch: the lock-free stack table must give one
    # id per site to all of them (checked by the program) and write each stack exactly once.
    for unwinder in ("auto", "cfi-only"):
        out, dump = run_traced(args, [os.path.join(args.bin_dir, "stacks_chain"), "threads"],
                               {"GPUTRACE_STACK_UNWINDER": unwinder})
        sites = sorted(st["callsite"] for st in dump["stacks"].values())
        assert len(sites) == 2 and len(set(sites)) == 2, sites
        assert dump["stack_records"] == 2, f"each stack written once: {dump['stack_records']}"
        assert sites[0].endswith(" in do_capture") and sites[1].endswith(" in other_site"), sites


def case_unwinder_backtrace(args):
    case_chain(args, env={"GPUTRACE_STACK_UNWINDER": "backtrace"})


def case_unwinder_cfi(args):
    case_chain(args, env={"GPUTRACE_STACK_UNWINDER": "cfi-only"})


def frames_of(args, cmd, unwinder, extra=None):
    env = {"GPUTRACE_STACK_UNWINDER": unwinder, "GPUTRACE_STACK_DEPTH": "64"}
    env.update(extra or {})
    out, dump = run_traced(args, cmd, env)
    sid = int(out.split()[-1])
    return [(f["module"], f["func"], f["offset"]) if not f["py"] else (f["file"], f["func"], f["line"])
            for f in dump["stacks"][sid]["frames"]]


def case_unwinders_agree(args):
    # gputrace's own CFI unwinder (used where libunwind is absent) must find exactly the frames
    # libgcc's unwinder finds: a C program and the Python interpreter (with and without the GIL).
    script = os.path.join(args.src_dir, "py_ctypes.py")
    cmds = [[os.path.join(args.bin_dir, "stacks_chain"), "deep"],
            [sys.executable, script, "gil"], [sys.executable, script, "nogil"]]
    for cmd in cmds:
        ref = frames_of(args, cmd, "backtrace")
        got = frames_of(args, cmd, "cfi-only")  # no fallback to backtrace() behind its back
        assert got == ref, f"{cmd}:\ncfi       {got}\nbacktrace {ref}"
        assert len(ref) > 10, ref


def case_stripped(args):
    full, fid = case_chain(args)
    _, dump = run_traced(args, [os.path.join(args.bin_dir, "stacks_chain_stripped"), "chain"])
    sid = min(i for i in dump["stacks"])
    stripped = [f for f in dump["stacks"][sid]["frames"] if f["module"] == "stacks_chain_stripped"]
    unstripped = [f for f in full["stacks"][fid]["frames"] if f["module"] == "stacks_chain"]
    assert len(stripped) >= 3, dump["stacks"][sid]
    # No names or lines survive strip, but the frames are still placed in the module, at the same
    # offsets as in the unstripped build (strip does not move code).
    for f in stripped[:3]:
        assert f["func"] == "-" and f["line"] == 0, f
    assert [f["offset"] for f in stripped[:3]] == [f["offset"] for f in unstripped[:3]]
    assert re.fullmatch(r"\[stacks_chain_stripped\+0x[0-9a-f]+\]", dump["stacks"][sid]["callsite"])


def case_debuglink(args):
    # The same program stripped, its symbols and DWARF kept in a separate file named by
    # .gnu_debuglink beside it (as distributions ship -dbg packages): names and lines come back.
    full, fid = case_chain(args)
    exe = "stacks_chain_debuglink"
    _, dump = run_traced(args, [os.path.join(args.bin_dir, exe), "chain"])
    sid = min(i for i in dump["stacks"])
    linked = [f for f in dump["stacks"][sid]["frames"] if f["module"] == exe]
    unstripped = [f for f in full["stacks"][fid]["frames"] if f["module"] == "stacks_chain"]
    assert len(linked) >= 3, dump["stacks"][sid]
    for a, b in zip(linked[:3], unstripped[:3]):
        assert (a["func"], a["file"], a["line"]) == (b["func"], b["file"], b["line"]), (a, b)
    assert dump["stacks"][sid]["callsite"] == full["stacks"][fid]["callsite"], dump["stacks"][sid]
    # Without the line tables (GPUTRACE_SOURCE_LINES=off) the names still come from the debug
    # file's symbol table.
    os.environ["GPUTRACE_SOURCE_LINES"] = "off"
    try:
        _, dump = run_traced(args, [os.path.join(args.bin_dir, exe), "chain"])
    finally:
        del os.environ["GPUTRACE_SOURCE_LINES"]
    sid = min(i for i in dump["stacks"])
    linked = [f for f in dump["stacks"][sid]["frames"] if f["module"] == exe]
    assert [f["func"] for f in linked[:3]] == [f["func"] for f in unstripped[:3]], linked[:3]


def case_deep(args):
    out, dump = run_traced(args, [os.path.join(args.bin_dir, "stacks_chain"), "deep"],
                           {"GPUTRACE_STACK_DEPTH": "8"})
    (_, sid), = ids_from(out)
    st = dump["stacks"][sid]
    assert st["truncated"], "a stack deeper than GPUTRACE_STACK_DEPTH is flagged truncated"
    funcs = native_funcs(st)
    assert funcs == ["recurse"] * 8, f"the 8 innermost frames are kept: {funcs}"


def case_off(args):
    # No stack, no record: this program uses no CUDA, so it may leave no trace at all.
    out, dump = run_traced(args, [os.path.join(args.bin_dir, "stacks_chain"), "chain"],
                           {"GPUTRACE_STACKS": "off"}, allow_no_trace=True)
    assert all(i == 0 for _, i in ids_from(out)), out
    assert not dump["stacks"]


def run_python(args, mode, python=None):
    script = os.path.join(args.src_dir, "py_ctypes.py")
    out, dump = run_traced(args, [python or sys.executable, script, mode])
    return script, int(out.split()[1]), dump


def case_python_gil(args, python=None):
    script, sid, dump = run_python(args, "gil", python)
    assert sid != 0
    st = dump["stacks"][sid]
    py = [f for f in st["frames"] if f["py"]]
    assert py, f"no Python frames: {st}"
    assert py[0]["file"] == script and py[0]["func"] == "capture_with_gil" and \
        py[0]["line"] == marker_line(script, "gil"), py[0]
    assert py[1]["func"] == "train_step" and py[1]["line"] == marker_line(script, "train_step")
    assert py[-1]["func"] == "<module>"
    assert st["callsite"] == f"py_ctypes.py:{marker_line(script, 'gil')} in capture_with_gil", st
    # Merged: gputrace/ctypes native frames above the Python frames, the interpreter below.
    first_py = st["frames"].index(py[0])
    assert first_py > 0 and not st["frames"][0]["py"]


def case_python_nogil(args, python=None):
    # ctypes.CDLL releases the GIL (as PyTorch does around its operators): the frames are read
    # from CPython's structures instead of the C API, and must be the same.
    script, sid, dump = run_python(args, "nogil", python)
    assert sid != 0
    st = dump["stacks"][sid]
    py = [f for f in st["frames"] if f["py"]]
    assert [(f["func"], f["line"]) for f in py[:2]] == [
        ("capture_without_gil", marker_line(script, "nogil")),
        ("train_step", marker_line(script, "train_step") + 2)], py
    assert st["callsite"] == f"py_ctypes.py:{marker_line(script, 'nogil')} in capture_without_gil"
    assert native_funcs(st), st


def case_python_nogil_no_vm_readv(args):
    # Where process_vm_readv is forbidden (seccomp in containers), the first, checked walk falls
    # back to reading through a pipe; the frames must be the same.
    shim = os.path.join(args.bin_dir, "libstacks_no_vm_readv.so")
    script = os.path.join(args.src_dir, "py_ctypes.py")
    saved = args.lib
    args.lib = shim + ":" + saved
    try:
        out, dump = run_traced(args, [sys.executable, script, "nogil"])
    finally:
        args.lib = saved
    st = dump["stacks"][int(out.split()[1])]
    assert st["callsite"] == f"py_ctypes.py:{marker_line(script, 'nogil')} in capture_without_gil", st


def case_python_nogil_off(args):
    # GPUTRACE_STACK_PYTHON=gil: only the C API reader, so no Python frames without the GIL.
    script = os.path.join(args.src_dir, "py_ctypes.py")
    out, dump = run_traced(args, [sys.executable, script, "nogil"], {"GPUTRACE_STACK_PYTHON": "gil"})
    st = dump["stacks"][int(out.split()[1])]
    assert not [f for f in st["frames"] if f["py"]] and native_funcs(st), st


def other_pythons():
    """CPython 3.10-3.13 interpreters on this machine (PATH or pyenv) other than the one running."""
    found = {}
    for minor in (10, 11, 12, 13):
        cands = [shutil.which(f"python3.{minor}")]
        root = os.path.expanduser("~/.pyenv/versions")
        if os.path.isdir(root):
            cands += [os.path.join(root, v, "bin", f"python3.{minor}") for v in sorted(os.listdir(root))
                      if v.startswith(f"3.{minor}.")]
        for c in cands:
            if c and os.path.exists(c) and os.path.realpath(c) != os.path.realpath(sys.executable):
                found[minor] = c
    return found


def case_python_versions(args):
    # The structures read without the GIL differ by version: check each interpreter present.
    found = other_pythons()
    if not found:
        print("no other CPython 3.10-3.13 here: skipped")
        sys.exit(SKIP)
    for minor, python in sorted(found.items()):
        case_python_gil(args, python)
        case_python_nogil(args, python)
        print(f"python 3.{minor} ({python}): ok")


def needs_fakes(args):
    if not os.path.exists(os.path.join(args.fake_dir, "libcudart.so.13")):
        print("fake libcudart.so.13 not built: skipped")
        sys.exit(SKIP)


def case_cuda_chain(args):
    needs_fakes(args)
    _, dump = run_traced(args, [os.path.join(args.bin_dir, "stacks_cuda_chain")])
    src = os.path.join(args.src_dir, "cuda_chain.c")
    syncs = [i for name, i in dump["api"] if name == "cudaStreamSynchronize"]
    copies = [i for name, i in dump["api"] if name == "cudaMemcpy"]
    assert len(syncs) == 3 and len(copies) == 3, dump["api"]
    assert len(set(syncs)) == 1 and syncs[0] != 0, f"one call site, one stack: {syncs}"
    assert len(set(copies)) == 1 and copies[0] not in (0, syncs[0]), copies
    st = dump["stacks"][syncs[0]]
    check_order(native_funcs(st), ["do_sync", "step", "main"])
    assert native_funcs(st)[0] == "do_sync", native_funcs(st)
    assert st["callsite"] == f"cuda_chain.c:{marker_line(src, 'do_sync')} in do_sync", st
    check_order(native_funcs(dump["stacks"][copies[0]]), ["do_copy", "step", "main"])


def case_python_cuda(args):
    needs_fakes(args)
    script = os.path.join(args.src_dir, "py_ctypes.py")
    _, dump = run_traced(args, [sys.executable, script, "cuda"])
    syncs = [i for name, i in dump["api"] if name == "cudaStreamSynchronize"]
    assert syncs and syncs[0] != 0, dump["api"]
    st = dump["stacks"][syncs[0]]
    assert st["callsite"] == f"py_ctypes.py:{marker_line(script, 'cuda')} in sync_fake_cuda", st


def case_python_sites(args):
    """The call-site cache: repeated calls from one line reuse one stack, two lines calling
    through the same native return address keep two stacks; the same with the cache off."""
    needs_fakes(args)
    script = os.path.join(args.src_dir, "py_ctypes.py")
    for cache in ("1", "0"):
        _, dump = run_traced(args, [sys.executable, script, "sites"],
                             {"GPUTRACE_STACK_CACHE": cache})
        syncs = [i for name, i in dump["api"] if name == "cudaStreamSynchronize"]
        assert len(syncs) == 6 and all(syncs), (cache, dump["api"])
        assert len(set(syncs[:3])) == 1 and len(set(syncs[3:])) == 1, (cache, syncs)
        assert syncs[0] != syncs[3], (cache, syncs)
        for i, name in ((0, "site_a"), (3, "site_b")):
            st = dump["stacks"][syncs[i]]
            want = f"py_ctypes.py:{marker_line(script, name)} in sync_from_two_lines"
            assert st["callsite"] == want, (cache, st)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    for opt in ("--lib", "--dump", "--bin-dir", "--fake-dir", "--src-dir"):
        ap.add_argument(opt, required=True)
    a = ap.parse_args()
    CASES[a.case](a)
    print(f"{a.case}: ok")
