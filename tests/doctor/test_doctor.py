#!/usr/bin/env python3
"""gputrace doctor on fake CUDA libraries (no GPU): one case per run.

usage: test_doctor.py CASE GPUTRACE_DOCTOR GPUTRACE|"" FAKE_LIB_DIR WORK_DIR TEST_DATA_DIR

The fakes (tests/doctor/*.c) simulate an H200 whose copies run at known rates (pinned 52 GB/s
H2D, 53 D2H; pageable 6.8 / 11; device copies 2000) and whose GEMMs run at 50 / 400 / 700 TFLOPS
(fp32 / TF32 / bf16), so the measured figures are asserted exactly. Library layouts are chosen by
LD_LIBRARY_PATH; `ldconfig -p` is replaced by an empty program so the host's own CUDA
installation never shows up.
"""
import json
import os
import shutil
import subprocess
import sys

CASE, DOCTOR, GPUTRACE, LIBS, WORK, DATA = sys.argv[1:7]
WORK = os.path.join(WORK, CASE)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

NO_LDCONFIG = os.path.join(WORK, "no_ldconfig")
with open(NO_LDCONFIG, "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
os.chmod(NO_LDCONFIG, 0o755)

FULL = ["gpu", "nvml", "cublas", "cuda13"]


def fail(msg, out=""):
    print("FAIL:", msg)
    if out:
        print("---- output ----\n" + out)
    sys.exit(1)


def check(cond, msg, out=""):
    if not cond:
        fail(msg, out)


def run(args, folders=FULL, env_extra=None, prog=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "GPUTRACE_"))}
    env.pop("XDG_CACHE_HOME", None)
    env["LD_LIBRARY_PATH"] = ":".join(os.path.join(LIBS, d) for d in folders)
    if "nvml" not in folders:  # a GPU machine's loader would find its real NVML
        env["GPUTRACE_DOCTOR_NVML"] = "none"
    env["GPUTRACE_DOCTOR_LDCONFIG"] = NO_LDCONFIG
    env["HOME"] = os.path.join(WORK, "home")
    env.update(env_extra or {})
    p = subprocess.run([prog or DOCTOR] + args, env=env, capture_output=True, text=True,
                       timeout=100)
    return p.returncode, p.stdout, p.stderr


def run_json(args, folders=FULL, env_extra=None):
    rc, out, err = run(["--json"] + args, folders, env_extra)
    try:
        return rc, json.loads(out), err
    except ValueError as e:
        fail("--json is not JSON: %s" % e, out + err)


def near(a, b, tol=0.02):
    return a is not None and abs(a - b) <= tol * abs(b)


def lib_entries(doc, soname):
    return [l for l in doc["libraries"] if l["soname"] == soname]


def check_schema(doc):
    """Every documented key with its type (docs/doctor.md)."""
    top = {"schema": str, "schema_version": int, "host": str, "time": str, "status": str,
           "driver": dict, "gpus": list, "libraries": list, "measurements": list,
           "checks": list}
    for k, t in top.items():
        check(isinstance(doc.get(k), t), "top-level %s is not %s" % (k, t.__name__), str(doc))
    check("python" in doc, "no python key")
    check(doc["schema"] == "gputrace-doctor" and doc["schema_version"] == 1, "schema name/version")
    check(doc["status"] in ("ok", "warn", "fail", "cannot-run"), "status value")
    for k in ("loaded", "library", "init_error", "cuda_version", "driver_version", "nvml"):
        check(k in doc["driver"], "driver.%s missing" % k)
    for g in doc["gpus"]:
        for k in ("ordinal", "name", "uuid", "pci_bus_id", "compute_capability", "sm_count",
                  "memory_bytes", "sm_clock_max_mhz", "sm_clock_now_mhz",
                  "memory_clock_max_mhz", "memory_bus_width_bits", "pcie",
                  "nvlink_active_links", "persistence_mode", "mig_mode"):
            check(k in g, "gpus[].%s missing" % k)
    for l in doc["libraries"]:
        for k in ("kind", "soname", "path", "realpath", "file_version", "source", "version",
                  "version_text", "built_for_cuda", "loader_choice", "shadowed_by", "error"):
            check(k in l, "libraries[].%s missing" % k)
        check(l["source"] in ("LD_LIBRARY_PATH", "ldconfig", "python"), "library source")
    for m in doc["measurements"]:
        for k in ("gpu", "error", "copy_bytes", "copies_gbps", "gemm_n", "cublas", "gemm_tflops"):
            check(k in m, "measurements[].%s missing" % k)
        for key in ("h2d_pageable", "h2d_pinned", "h2d_registered", "d2h_pageable",
                    "d2h_pinned", "d2h_registered", "d2d"):
            c = m["copies_gbps"][key]
            for k in ("best", "median", "runs", "specified", "specified_from",
                      "percent_of_specified", "error"):
                check(k in c, "copies_gbps.%s.%s missing" % (key, k))
        for key in ("fp32", "tf32", "bf16"):
            check(key in m["gemm_tflops"], "gemm_tflops.%s missing" % key)
    for c in doc["checks"]:
        check(c["status"] in ("ok", "warn", "fail") and c["id"] and c["text"], "check entry")


def case_ok():
    rc, out, err = run([])
    check(rc == 0, "exit status %d, want 0" % rc, out + err)
    for want in ("driver 580.159, supports CUDA 13.0", "NVIDIA H200 (fake 0)",
                 "compute capability 9.0, 132 SMs", "gen5 x16", "(63.0 GB/s each way)",
                 "NVLink 18 links active (version 4)", "persistence mode on",
                 "libcudnn.so.9      9.19.0       for CUDA 13.0",
                 "H2D pinned            52.0 GB/s", "D2H pageable          11.0 GB/s",
                 "82.5% of 63.0 GB/s (PCIe gen5 x16)", "GEMM bf16            700.0 TFLOPS",
                 "65.4% of 1070.5 TFLOPS (132 SMs x 1980 MHz x 4096 FLOP/clk)",
                 "0 warnings, 0 failures"):
        check(want in out, "text lacks %r" % want, out)


def case_json():
    rc, doc, err = run_json([])
    check(rc == 0, "exit status %d" % rc, err)
    check_schema(doc)
    check(doc["status"] == "ok", "status %s" % doc["status"])
    check(doc["driver"]["cuda_version"] == "13.0" and doc["driver"]["driver_version"] == "580.159",
          "driver versions", str(doc["driver"]))
    g = doc["gpus"][0]
    check(g["compute_capability"] == "9.0" and g["sm_count"] == 132, "gpu fields", str(g))
    check(g["pcie"] == {"gen_now": 5, "width_now": 16, "gen_max": 5, "width_max": 16,
                        "source": "NVML"}, "pcie", str(g["pcie"]))
    check(g["uuid"] == "GPU-10111213-1415-1617-1819-1a1b1c1d1e1f", "uuid %s" % g["uuid"])
    versions = {l["soname"]: (l["version"], l["built_for_cuda"], l["file_version"])
                for l in doc["libraries"]}
    check(versions.get("libcudart.so.13") == (13000, "13.0", "13.0.96"), "cudart", str(versions))
    check(versions.get("libcudnn.so.9") == (91900, "13.0", "9.19.0"), "cudnn", str(versions))
    check(versions.get("libcupti.so.13", (0,))[0] == 130001, "cupti", str(versions))
    check(versions.get("libcublas.so.13", (0,))[0] == 130100, "cublas", str(versions))
    m = doc["measurements"][0]
    c = m["copies_gbps"]
    for key, want in (("h2d_pinned", 52), ("d2h_pinned", 53), ("h2d_pageable", 6.8),
                      ("d2h_pageable", 11), ("h2d_registered", 52), ("d2d", 2000)):
        check(near(c[key]["best"], want), "%s best %s, want %s" % (key, c[key]["best"], want))
    check(near(c["h2d_pinned"]["specified"], 63.02, 0.001), "PCIe gen5 x16 figure")
    check(near(c["d2d"]["specified"], 4917 / 2, 0.01), "D2D figure: half the memory bandwidth")
    t = m["gemm_tflops"]
    for key, want, spec in (("fp32", 50, 66.9), ("tf32", 400, 535.3), ("bf16", 700, 1070.5)):
        check(near(t[key]["best"], want), "gemm %s %s" % (key, t[key]["best"]))
        check(near(t[key]["specified"], spec, 0.002), "gemm %s spec %s" % (key, t[key]["specified"]))
    check(m["gemm_n"] == 8192, "gemm size")


def case_duplicate():
    rc, out, err = run([], FULL + ["cudnn914"])
    check(rc == 0, "a shadowed copy is a warning, not a failure (rc %d)" % rc, out + err)
    check("warn  two libcudnn.so.9 on the loader's path: 9.19.0" in out and
          "cuda13/libcudnn.so.9 (LD_LIBRARY_PATH) is taken, 9.14.0" in out and
          "cudnn914/libcudnn.so.9 (LD_LIBRARY_PATH) is shadowed" in out,
          "duplicate not named", out)
    rc, doc, err = run_json([], FULL + ["cudnn914"])
    cud = lib_entries(doc, "libcudnn.so.9")
    check(len(cud) == 2 and cud[0]["loader_choice"] and not cud[1]["loader_choice"] and
          cud[1]["shadowed_by"].endswith("cuda13/libcudnn.so.9") and cud[1]["version"] == 91400
          and cud[1]["built_for_cuda"] == "12.8", "JSON duplicate", str(cud))
    check(doc["status"] == "warn", "status %s" % doc["status"])


def case_mismatch():
    rc, out, err = run([], ["gpu", "nvml", "cublas", "cudnn914", "cuda13"])
    check(rc == 3, "cuDNN for CUDA 12 with a CUDA 13 runtime must fail (rc %d)" % rc, out + err)
    check("FAIL  cuDNN 9.14.0 (" in out and "was built for CUDA 12.8, but the CUDA runtime the "
          "loader takes is 13.0" in out, "mismatch not named", out)
    # With a CUDA 12 runtime on the path too, CUDA 12 programs are fine: a warning.
    rc, out, err = run([], ["gpu", "nvml", "cublas", "cudnn914", "cuda13", "cuda12"])
    check(rc == 0 and "warn  cuDNN 9.14.0 (" in out and "was built for CUDA 12.8: right for "
          "programs using" in out and "cuda12/libcudart.so.12, wrong for those using the CUDA "
          "13.0 runtime" in out, "cuDNN for 12 beside libcudart.so.12", out + err)


def case_missing():
    rc, out, err = run([], ["gpu", "nvml"])
    check(rc == 0, "missing libraries are warnings (rc %d)" % rc, out + err)
    for want in ("warn  no CUDA runtime (libcudart.so.N) on the loader's path",
                 "warn  no cuDNN (libcudnn.so.N)", "warn  no CUPTI (libcupti.so.N)",
                 "warn  no cuBLAS (libcublas.so.N)",
                 "warn  GPU 0: GEMM bf16 not measured: no libcublas on the loader's path",
                 "H2D pinned            52.0 GB/s"):
        check(want in out, "text lacks %r" % want, out)


def case_no_nvml():
    rc, out, err = run([], ["gpu", "cublas", "cuda13"])
    check(rc == 0, "no NVML is not a failure (rc %d)" % rc, out + err)
    check("PCIe link not readable" in out and "NVLink not readable" in out and
          "persistence mode not readable" in out, "NVML fields not marked", out)
    check("H2D pinned            52.0 GB/s   (median 52.0, 8 runs)  no specified figure" in out,
          "copies without a PCIe figure", out)
    rc, doc, err = run_json([], ["gpu", "cublas", "cuda13"])
    g = doc["gpus"][0]
    check(g["pcie"] is None and g["persistence_mode"] is None and
          g["nvlink_active_links"] is None and doc["driver"]["driver_version"] is None,
          "JSON nulls for what is not readable", str(g))
    # The SM clock still comes from the driver attribute: GEMM figures stay.
    check(near(doc["measurements"][0]["gemm_tflops"]["bf16"]["specified"], 1070.5, 0.002),
          "spec without NVML")


def case_no_gpu():
    rc, out, err = run([], env_extra={"FAKE_CUDA_NO_DEVICE": "1"})
    check(rc == 2, "no GPU: exit 2, got %d" % rc, out + err)
    check("cannot run: cuInit failed: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is "
          "detected" in err, "no clear message on stderr", err)
    check("libcudnn.so.9" in out, "the libraries are still listed", out)
    rc, doc, err = run_json([], env_extra={"FAKE_CUDA_NO_DEVICE": "1"})
    check(rc == 2 and doc["status"] == "cannot-run" and doc["gpus"] == [] and
          doc["measurements"] == [] and doc["driver"]["init_error"].startswith(
              "CUDA_ERROR_NO_DEVICE"), "JSON without a GPU", json.dumps(doc)[:800])
    check_schema(doc)
    # No driver at all: libcuda.so.1 not on the path (unless the machine has a real one).
    rc, out, err = run([], ["cuda13"])
    if "libcuda.so.1 not found" in out:
        check(rc == 2 and "no NVIDIA driver is installed" in err, "no driver message", err)
    rc, out, err = run(["--save"], env_extra={"FAKE_CUDA_NO_DEVICE": "1"})
    check(rc == 2 and not os.path.exists(os.path.join(WORK, "home", ".cache", "gputrace")),
          "--save without a GPU writes nothing", err)


def case_no_driver_gpus():
    rc, out, err = run([], env_extra={"FAKE_CUDA_DEVICE_COUNT": "0"})
    check(rc == 2 and "the driver sees no GPU" in err, "0 devices: exit 2 with a message",
          out + err)


def case_old_driver():
    rc, out, err = run([], env_extra={"FAKE_CUDA_DRIVER_VERSION": "12080"})
    check(rc == 3, "driver 12.8 with runtime 13.0 must fail (rc %d)" % rc, out + err)
    check("FAIL  the driver supports CUDA 12.8 but" in out and "is CUDA 13.0" in out,
          "old driver not named", out)


def fake_python(arch, cudnn_dir=None, available=1):
    path = os.path.join(WORK, "python-%s" % arch.replace(" ", "_"))
    lines = ["python\t3.12.3"]
    if cudnn_dir:
        lines.append("libdir\t" + cudnn_dir)
    lines += ["torch.version\t2.11.0+cu130", "torch.cuda\t13.0", "torch.cudnn\t91900",
              "torch.arch\t" + arch, "torch.available\t%d" % available, "torch.count\t1",
              "torch.devices\tNVIDIA H200 (sm_90)", "jax.error\tModuleNotFoundError: jax"]
    with open(path, "w") as f:
        f.write("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % "\n".join(lines))
    os.chmod(path, 0o755)
    return path


def case_python_arch():
    py = fake_python("sm_75 sm_80 sm_86")
    rc, out, err = run(["--python", py, "--no-bench"])
    check(rc == 3, "an arch list without sm_90 must fail on an sm_90 GPU (rc %d)" % rc, out + err)
    check("FAIL  PyTorch's arch list (sm_75 sm_80 sm_86) has no code for GPU 0 (sm_90)" in out and
          "no kernel image is available" in out, "arch failure not explained", out)
    py = fake_python("sm_80 compute_80")
    rc, out, err = run(["--python", py, "--no-bench"])
    check(rc == 0 and "warn  PyTorch has only PTX for GPU 0 (sm_90)" in out, "PTX only", out)
    # Arch-specific cubins run only on that exact GPU; a cubin of a lower minor of the same major
    # runs (sm_80 on 8.6, not on 9.0).
    rc, out, err = run(["--python", fake_python("sm_80 sm_90a"), "--no-bench"])
    check(rc == 0 and "ok    PyTorch has kernels for GPU 0 (sm_90)" in out, "sm_90a on 9.0", out)
    rc, out, err = run(["--python", fake_python("sm_89 sm_100a compute_100"), "--no-bench"])
    check(rc == 3 and "has no code for GPU 0 (sm_90)" in out, "sm_89/sm_100a/PTX 10.0 on 9.0", out)
    py = fake_python("sm_90", available=0)
    rc, out, err = run(["--python", py, "--no-bench"])
    check(rc == 3 and "torch.cuda.is_available() is False although the driver sees 1 GPU" in out,
          "not available", out)
    rc, out, err = run(["--python", os.path.join(WORK, "no-such-python"), "--no-bench"])
    check(rc == 0 and "did not run" in out, "a missing interpreter is a warning", out + err)


def case_python_ok():
    # The same cuDNN in a wheel and on the loader's path (a file without a version in its name):
    # no warning.
    same = os.path.join(WORK, "same", "nvidia", "cudnn", "lib")
    os.makedirs(same)
    shutil.copy(os.path.join(LIBS, "cuda13", "libcudnn.so.9.19.0"),
                os.path.join(same, "libcudnn.so.9"))
    rc, out, err = run(["--python", fake_python("sm_90", same), "--no-bench"])
    check(rc == 0 and "two libcudnn.so.9" not in out and "0 warnings" in out,
          "an identical wheel copy must not warn", out + err)
    site = os.path.join(WORK, "site", "nvidia", "cudnn", "lib")
    os.makedirs(site)
    src = os.path.join(LIBS, "cudnn914", "libcudnn.so.9.14.0")
    shutil.copy(src, os.path.join(site, "libcudnn.so.9"))
    py = fake_python("sm_80 sm_90 sm_100", site)
    rc, out, err = run(["--python", py, "--no-bench"])
    check(rc == 0, "rc %d" % rc, out + err)
    for want in ("torch  2.11.0+cu130, built for CUDA 13.0, cuDNN 9.19.0; sees 1 GPU(s)",
                 "ok    PyTorch has kernels for GPU 0 (sm_90)",
                 "jax    not importable: ModuleNotFoundError: jax",
                 "warn  two libcudnn.so.9: 9.14.0 in the Python packages",
                 "libcudnn.so.9      9.14.0       for CUDA 12.8  python"):
        check(want in out, "text lacks %r" % want, out)
    rc, doc, err = run_json(["--python", py, "--no-bench"])
    check_schema(doc)
    check(doc["python"]["torch"]["arch_list"] == "sm_80 sm_90 sm_100" and
          doc["python"]["library_dirs"] == [site], "python JSON", str(doc["python"]))
    # The real interpreter, if any: must answer without crashing doctor.
    rc, out, err = run(["--python", sys.executable, "--no-bench"])
    check(rc in (0, 3) and "Python " in out, "real interpreter", out + err)


def case_save():
    rc, out, err = run(["--save"])
    check(rc == 0, "rc %d" % rc, out + err)
    path = os.path.join(WORK, "home", ".cache", "gputrace",
                        "peaks-GPU-10111213-1415-1617-1819-1a1b1c1d1e1f.json")
    check(os.path.exists(path) and path in err, "peaks file not at %s" % path, err)
    doc = json.load(open(path))
    check(doc["schema"] == "gputrace-peaks" and doc["gpu_name"] == "NVIDIA H200 (fake 0)",
          "peaks header", str(doc))
    check(near(doc["copies_gbps"]["h2d_pinned"], 52) and
          near(doc["copies_gbps"]["d2h_pageable"], 11) and
          near(doc["gemm_tflops"]["bf16"], 700), "peaks values", str(doc))
    other = os.path.join(WORK, "elsewhere", "mine.json")
    rc, out, err = run(["--save", "--copies-only", "-q"], env_extra={"GPUTRACE_PEAKS": other})
    check(rc == 0 and out == "" and os.path.exists(other), "GPUTRACE_PEAKS=file", out + err)
    doc = json.load(open(other))
    check(doc["gemm_tflops"]["bf16"] is None and near(doc["copies_gbps"]["h2d_pinned"], 52),
          "--copies-only saves no GEMM", str(doc))
    folder = os.path.join(WORK, "folder")
    rc, out, err = run(["--save", "--copies-only"], env_extra={"GPUTRACE_PEAKS": folder + "/"})
    check(rc == 0 and os.path.exists(os.path.join(folder, os.path.basename(path))),
          "GPUTRACE_PEAKS=folder/", err)
    rc, out, err = run(["--save"], env_extra={"GPUTRACE_PEAKS": "/proc/no/such/dir/"})
    check(rc == 2 and "cannot write the peaks file" in err, "unwritable peaks: exit 2", err)


def case_usage():
    for args in (["--device", "x"], ["extra"], ["--save", "--no-bench"], ["--bogus"]):
        rc, out, err = run(args)
        check(rc == 2, "%s: rc %d, want 2" % (args, rc), out + err)
    rc, out, err = run(["--device", "3"])
    check(rc == 2 and "no GPU 3" in err, "--device out of range", err)
    rc, out, err = run(["--help"])
    check(rc == 0 and "usage: gputrace doctor" in out, "--help")
    rc, out, err = run(["--device", "all"], env_extra={"FAKE_CUDA_DEVICE_COUNT": "2"})
    check(rc == 0 and "measured on GPU 1 (NVIDIA H200 (fake 1))" in out, "--device all", out)


def case_gputrace_command():
    if not GPUTRACE:
        print("SKIP: no analyzer built")
        return
    rc, out, err = run(["doctor", "--no-bench"], prog=GPUTRACE)
    check(rc == 0 and "gputrace doctor:" in out and "NVIDIA H200 (fake 0)" in out,
          "gputrace doctor", out + err)
    rc, out, err = run(["--help"], prog=GPUTRACE)
    check("doctor" in out, "doctor not in gputrace --help", out)


def trace_identity(trace):
    out = subprocess.run([GPUTRACE, "info", trace], capture_output=True, text=True).stdout
    host = [l.split(None, 1)[1].strip() for l in out.splitlines() if l.strip().startswith("host")]
    dev = [l.split(None, 2)[2].split(",")[0].strip() for l in out.splitlines()
           if l.strip().startswith("device 0")]
    return host[0], dev[0]


def case_report_peaks():
    if not GPUTRACE:
        print("SKIP: no analyzer built")
        return
    trace = os.path.join(DATA, "pageable_copies.gtrace")
    host, gpu = trace_identity(trace)
    peaks = {"schema": "gputrace-peaks", "schema_version": 1, "host": host,
             "measured_at": "2026-12-01T12:00:00Z", "gpu_name": gpu, "gpu_uuid": "GPU-x",
             "copies_gbps": {"h2d_pageable": 6.9, "h2d_pinned": 54.0, "h2d_registered": 54.0,
                             "d2h_pageable": 11.0, "d2h_pinned": 53.0, "d2h_registered": 53.0,
                             "d2d": 2100.0},
             "gemm_tflops": {"fp32": 50.0, "tf32": 400.0, "bf16": 700.0}}
    cache = os.path.join(WORK, "home", ".cache", "gputrace")
    os.makedirs(cache)
    with open(os.path.join(cache, "peaks-GPU-x.json"), "w") as f:
        json.dump(peaks, f)
    # A peaks file of another GPU in the same folder must not be taken.
    with open(os.path.join(cache, "peaks-GPU-y.json"), "w") as f:
        json.dump(dict(peaks, gpu_name="Other GPU", measured_at="2027-01-01T00:00:00Z",
                       copies_gbps=dict(peaks["copies_gbps"], h2d_pinned=1.0)), f)
    rc, out, err = run(["report", trace], prog=GPUTRACE)
    check(rc == 0, "report rc %d" % rc, out + err)
    for want in ("this machine (gputrace doctor, 2026-12-01T12:00:00Z): H2D pinned 54.0, "
                 "pageable 6.9 GB/s; D2H pinned 53.0, pageable 11.0 GB/s",
                 "H2D pageable 6.56 GB/s: 95% of this machine's pageable peak (pinned memory "
                 "would reach 54.0 GB/s)",
                 "On this machine pinned copies reach 54.0 GB/s H2D and 53.0 GB/s D2H"):
        # the text report wraps its lines to the terminal: compare with the breaks as spaces
        check(want in " ".join(out.split()), "report lacks %r" % want, out)
    rc, out, err = run(["report", "--json", trace], prog=GPUTRACE)
    doc = json.loads(out)
    mp = doc["processes"][0]["machine_peaks"]
    check(mp and mp["same_machine"] and mp["copies_gbps"]["h2d_pinned"] == 54.0 and
          mp["gpu_name"] == gpu, "machine_peaks in JSON", str(mp))
    adv = [a for a in doc["advice"] if a["id"] == "pinned-memory"][0]
    check(near(adv["evidence"].get("pinned_ms_this_machine"), 671.09 / 54.0 + 671.09 / 53.0),
          "advice evidence", str(adv))
    # GPUTRACE_PEAKS=off, and no matching file: the report says nothing about this machine.
    rc, out, err = run(["report", trace], prog=GPUTRACE, env_extra={"GPUTRACE_PEAKS": "off"})
    check("this machine" not in out, "GPUTRACE_PEAKS=off still compared", out)
    # A file named by GPUTRACE_PEAKS from another machine is used and says where it came from.
    other = os.path.join(WORK, "other.json")
    with open(other, "w") as f:
        json.dump(dict(peaks, host="elsewhere"), f)
    rc, out, err = run(["report", trace], prog=GPUTRACE, env_extra={"GPUTRACE_PEAKS": other})
    check("measured on elsewhere, " + gpu in " ".join(out.split()), "foreign peaks file not labelled",
          out)
    # GEMMs against the peaks (a trace with cuBLAS GEMMs).
    rc, out, err = run(["report", os.path.join(DATA, "resnet50_train.gtrace")], prog=GPUTRACE,
                       env_extra={"GPUTRACE_PEAKS": other})
    out = " ".join(out.split())  # the text report wraps its lines to the terminal
    check("GEMM fp32 50.0, TF32 400.0, bf16 700.0 TFLOPS" in out and
          "cublasSgemm_v2 2048x64x1000: " in out and "of this machine's fp32 peak" in out,
          "GEMMs not compared", out)


def case_record_peaks():
    if not GPUTRACE:
        print("SKIP: no analyzer built")
        return
    path = os.path.join(WORK, "home", ".cache", "gputrace",
                        "peaks-GPU-10111213-1415-1617-1819-1a1b1c1d1e1f.json")
    rc, out, err = run(["record", "-o", os.path.join(WORK, "run"), "--no-report", "--", "true"],
                       prog=GPUTRACE)
    check(not os.path.exists(path) and "measuring" not in err, "record measured without --peaks")
    rc, out, err = run(["record", "--peaks", "-o", os.path.join(WORK, "run"), "-f", "--no-report",
                        "--", "true"], prog=GPUTRACE)
    check(os.path.exists(path) and "no peaks file for this GPU yet" in err,
          "record --peaks wrote no peaks file", out + err)
    doc = json.load(open(path))
    check(near(doc["copies_gbps"]["h2d_pinned"], 52) and doc["gemm_tflops"]["bf16"] is None,
          "record --peaks measures copies only", str(doc))
    rc, out, err = run(["record", "--peaks", "-o", os.path.join(WORK, "run"), "-f", "--no-report",
                        "--", "true"], prog=GPUTRACE)
    check("measuring" not in err, "record --peaks measured again although a file exists", err)
    rc, out, err = run(["record", "--peaks", "-o", os.path.join(WORK, "run2"), "--no-report",
                        "--", "true"], prog=GPUTRACE, env_extra={"FAKE_CUDA_NO_DEVICE": "1"})
    check("could not measure this machine's peaks (no GPU?); recording anyway" in err,
          "record --peaks without a GPU", err)


def case_crashing_library():
    rc, out, err = run([], ["broken"] + FULL)
    check(rc == 0, "a library that crashes when loaded must not stop doctor (rc %d)" % rc,
          out + err)
    check("version not read: loading it crashed the probe" in out and
          "GEMM bf16            700.0 TFLOPS" in out, "crash not reported, or doctor stopped", out)
    rc, doc, err = run_json([], ["broken"] + FULL)
    bad = [l for l in doc["libraries"] if "broken" in l["path"]][0]
    check(bad["version"] is None and bad["error"] == "loading it crashed the probe" and
          bad["loader_choice"], "JSON for the crashing library", str(bad))


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
if CASE not in CASES:
    fail("unknown case %s" % CASE)
CASES[CASE]()
print("ok:", CASE)
