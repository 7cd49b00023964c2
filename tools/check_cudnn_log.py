#!/usr/bin/env python3
"""check_cudnn_log.py — compare what gputrace decoded for cuDNN backend executes with cuDNN's own
debug log (CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG=file), an independent record of every
cudnnBackendExecute with its operation, tensors, engine id, knobs and numerical notes.

usage: check_cudnn_log.py [--gputrace BIN] TRACE CUDNN_LOG[.gz]

TRACE is read with `gputrace report --json` (per op signature: engine, notes with the knob choices,
executions and autotuning executions). The log is streamed (it is large) and each execute block is
turned into the same signature text as analyzer/model/cudnn_json.c writes. Printed: executes per engine
id from both sources, then per (signature, engine, knobs, notes) the counts on both sides, and
every mismatch. Exit status 0 when both agree, 1 when they differ, 2 on bad input.
"""
import argparse
import collections
import gzip
import json
import re
import subprocess
import sys

DTYPES = ["float", "double", "half", "int8", "int32", "int8x4", "uint8", "uint8x4", "int8x32",
          "bfloat16", "int64", "bool", "fp8_e4m3", "fp8_e5m2"]
OPS = {"CONVOLUTION_FORWARD": "conv_fwd", "CONVOLUTION_BACKWARD_DATA": "conv_bwd_data",
       "CONVOLUTION_BACKWARD_FILTER": "conv_bwd_filter"}
NOTES = {"TENSOR_CORE": "tensor cores", "DOWN_CONVERT_INPUTS": "down-convert inputs",
         "REDUCED_PRECISION_REDUCTION": "reduced-precision reduction", "FFT": "FFT",
         "NONDETERMINISTIC": "nondeterministic", "WINOGRAD": "Winograd",
         "WINOGRAD_TILE_4x4": "Winograd 4x4", "WINOGRAD_TILE_6x6": "Winograd 6x6",
         "WINOGRAD_TILE_13x13": "Winograd 13x13", "STRICT_NAN_PROP": "strict NaN"}

RE_HEADER = re.compile(r"^[IWEi]! CuDNN \(v\d+ \d+\) function (\w+)\(\) called")
RE_OP = re.compile(r"(?:operation|\w+Op): type=CUDNN_BACKEND_OPERATION_(\w+?)_DESCRIPTOR:")
RE_DESC = re.compile(r"^i! +(\w+)Desc: type=CUDNN_BACKEND_(\w+)_DESCRIPTOR")
RE_ARRAY = re.compile(r"^i! +(\w+): type=int; val=\[([-0-9,]*)\];")
RE_DTYPE = re.compile(r"^i! +(type|computeType): type=cudnnDataType_t; val=CUDNN_DATA_\w+ \((\d+)\);")
RE_ENGINE = re.compile(r"^i! +engine_id: type=int; val=(-?\d+);")
RE_KNOB = re.compile(r"^i! +CUDNN_KNOB_TYPE_(\w+): type=int; val=(-?\d+);")
RE_NOTE = re.compile(r"^i! +CUDNN_NUMERICAL_NOTE_(\w+): type=bool; val=true;")


def same_or_list(v):
    return str(v[0]) if all(x == v[0] for x in v) else ",".join(str(x) for x in v)


def dims(v):
    return "x".join(str(x) for x in v)


def label(e):
    """The signature as gt_cudnn_sig_label() writes it."""
    x = e["tensors"].get("x") or e["tensors"].get("dx") or {}
    w = e["tensors"].get("w") or e["tensors"].get("dw") or {}
    xd, xs, wd = x.get("dimA", []), x.get("strideA", []), w.get("dimA", [])
    if len(xd) < 3 or len(wd) < 3:
        return None
    conv = e["conv"]
    pad = conv.get("lowerPadA", [0] * (len(xd) - 2))
    stride = conv.get("strideA", [1] * (len(xd) - 2))
    dil = conv.get("dilationA", [1] * (len(xd) - 2))
    nhwc = xd[1] > 1 and xs and xs[1] == 1
    layout = ("NDHWC" if nhwc else "NCDHW") if len(xd) == 5 else ("NHWC" if nhwc else "NCHW")
    dt = x.get("type", -1)
    s = "%s %s w%s pad%s str%s %s %s" % (OPS.get(e["op"], e["op"].lower()), dims(xd), dims(wd),
                                        same_or_list(pad), same_or_list(stride), layout,
                                        DTYPES[dt] if 0 <= dt < len(DTYPES) else "?")
    if same_or_list(dil) != "1":
        s += " dil" + same_or_list(dil)
    groups = xd[1] // wd[1] if wd[1] > 0 and xd[1] >= wd[1] else 1
    if groups > 1:
        s += " g%d" % groups
    ct = conv.get("computeType", dt)
    if ct != dt and 0 <= ct < len(DTYPES):
        s += " acc " + DTYPES[ct]
    return s


def log_executes(path):
    """Yield one dict per cudnnBackendExecute entry block that names an execution plan."""
    opener = gzip.open if path.endswith(".gz") else open
    cur = None
    section = None
    with opener(path, "rt", errors="replace") as f:
        for line in f:
            m = RE_HEADER.match(line)
            if m:
                if cur and cur["plan"]:
                    yield cur
                cur = None
                if m.group(1) == "cudnnBackendExecute":
                    cur = {"plan": False, "op": None, "tensors": {}, "conv": {}, "engine": None,
                           "knobs": {}, "notes": set()}
                    section = None
                continue
            if cur is None:
                continue
            if "executionPlan: type=CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR" in line:
                cur["plan"] = True
            m = RE_OP.search(line)
            if m and cur["op"] is None:
                cur["op"] = m.group(1)
                continue
            m = RE_DESC.match(line)
            if m:
                name, kind = m.group(1), m.group(2)
                if kind == "TENSOR":
                    section = cur["tensors"].setdefault(name.lower(), {})
                elif kind == "CONVOLUTION":
                    section = cur["conv"]
                else:
                    section = None
                continue
            m = RE_ARRAY.match(line)
            if m and section is not None and m.group(1) not in section:
                section[m.group(1)] = [int(v) for v in m.group(2).split(",") if v]
                continue
            m = RE_DTYPE.match(line)
            if m and section is not None:
                section[m.group(1)] = int(m.group(2))
                continue
            m = RE_ENGINE.match(line)
            if m:
                cur["engine"] = int(m.group(1))
                section = None
                continue
            m = RE_KNOB.match(line)
            if m:
                cur["knobs"][m.group(1)] = int(m.group(2))
                continue
            m = RE_NOTE.match(line)
            if m:
                cur["notes"].add(NOTES.get(m.group(1), m.group(1)))
    if cur and cur["plan"]:
        yield cur


def split_notes(text):
    """Our notes: 'tensor cores, FFT (TF32); TILE_SIZE=1 STAGES=4' -> (notes set, knobs dict)."""
    notes, _, knobs = text.partition("; ")
    if "=" in notes and not knobs:  # knobs only
        notes, knobs = "", notes
    notes = notes.replace(" (TF32)", "")
    nset = {n.strip() for n in notes.split(",") if n.strip()}
    kd = {}
    for kv in knobs.split():
        k, _, v = kv.partition("=")
        if v.lstrip("-").isdigit():
            kd[k] = int(v)
    return nset, kd


def key_of(sig, engine, notes, knobs):
    return (sig, engine, " ".join("%s=%d" % kv for kv in sorted(knobs.items())),
            ", ".join(sorted(notes)))


def trace_counts(gputrace, trace):
    out = subprocess.run([gputrace, "report", "--json", trace], capture_output=True, text=True)
    if out.returncode not in (0, 1, 3):
        sys.exit("check_cudnn_log: gputrace report failed (%d): %s" % (out.returncode, out.stderr))
    rep = json.loads(out.stdout)
    counts, tuned = collections.Counter(), collections.Counter()
    for proc in rep.get("processes", []):
        for op in proc.get("cudnn", []):
            for ch in op.get("choices", []):
                m = re.match(r"engine (-?\d+)$", ch.get("engine", ""))
                if not m:
                    continue
                notes, knobs = split_notes(ch.get("notes", ""))
                k = key_of(op["signature"], int(m.group(1)), notes, knobs)
                counts[k] += ch.get("executions", 0) + ch.get("autotune_executions", 0)
                tuned[k] += ch.get("autotune_executions", 0)
    return counts, tuned


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gputrace", default="build/bin/gputrace")
    ap.add_argument("trace")
    ap.add_argument("log")
    a = ap.parse_args()
    ours, tuned = trace_counts(a.gputrace, a.trace)
    theirs = collections.Counter()
    for e in log_executes(a.log):
        sig = label(e) or "%s (unparsed)" % e["op"]
        theirs[key_of(sig, e["engine"], e["notes"], e["knobs"])] += 1

    by_engine_ours, by_engine_log = collections.Counter(), collections.Counter()
    for k, n in ours.items():
        by_engine_ours[k[1]] += n
    for k, n in theirs.items():
        by_engine_log[k[1]] += n
    print("executes per engine id (gputrace / cuDNN log)")
    for eng in sorted(set(by_engine_ours) | set(by_engine_log), key=lambda e: (e is None, e)):
        o, t = by_engine_ours[eng], by_engine_log[eng]
        print("  engine %-4s %6d %6d%s" % (eng, o, t, "" if o == t else "   MISMATCH"))
    print("  total       %6d %6d" % (sum(ours.values()), sum(theirs.values())))

    keys = sorted(set(ours) | set(theirs), key=lambda k: (k[0], str(k[1]), k[2]))
    mism = [k for k in keys if ours[k] != theirs[k]]
    print("\nper signature x engine config: %d configs, %d agree, %d differ"
          % (len(keys), len(keys) - len(mism), len(mism)))
    for k in keys:
        flag = "" if ours[k] == theirs[k] else "  <-- MISMATCH"
        tune = " (%d autotuning)" % tuned[k] if tuned[k] else ""
        print("  %5d %5d  %s | engine %s | %s | %s%s%s" % (ours[k], theirs[k], k[0], k[1],
                                                           k[3] or "-", k[2] or "-", tune, flag))
    return 1 if mism else 0


if __name__ == "__main__":
    sys.exit(main())
