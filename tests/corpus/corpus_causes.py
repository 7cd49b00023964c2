"""The diagnoses issue 30 asks of the corpus variants (tests/corpus/corpus_variants.py), by the
causes' definitions and against each program's own clock (its CORPUS lines): launch-bound on the
tiny-kernel loops at one and 100 launches a step whatever the launch path, torch.compile's
compilation named as such (and recompiles counted apart), the straggler by the collective over the
matrix, and x.cpu()'s staging as the copy's idle, never data loading.

CAUSES: case (or case-name prefix, for the straggler matrix) -> check(report, processes with kernels,
CORPUS lines as dicts) -> None or what is wrong. test_corpus.py calls the check of a case whose
archive is in tests/data/corpus.
"""


def advice(report, rule, rank=None):
    return [a for a in report["advice"] if a["id"] == rule and (rank is None or a["rank"] == rank)]


def program_step_ms(own):
    """The program's step: its median interval when each step syncs, else its wall time a step."""
    return float(own["step_ms_median"] if own.get("sync") == "step" else own["step_ms_wall"])


def launch_bound(words):
    """The GPU idles between the kernels for the program's step less its kernels' time, and the
    remedy speaks the launch path's framework (words)."""
    def check(report, cuda, lines):
        adv = advice(report, "launch-bound")
        if len(adv) != 1:
            return "launch-bound advice: %s" % [a["id"] for a in report["advice"]]
        launch, step = cuda[0]["gpu"]["launch"], program_step_ms(lines[0])
        kernels = launch["kernels_per_step"] * (launch["kernel_us_mean"] or 0) / 1e3
        if abs(launch["idle_ms_per_step"] - (step - kernels)) > 0.25 * step:
            return "launch idle %.4f ms a step; the program's step %.4f ms less its kernels %.4f" % (
                launch["idle_ms_per_step"], step, kernels)
        if words and words not in adv[0]["message"]:
            return "remedy not in the framework's terms (%s): %s" % (words, adv[0]["message"])
        return None
    return check


def compilation(recompiles):
    """torch.compile's first compilation is compilation, about the program's first step (its
    compile), with one-time-cost advice; recompiles: None = at least one, with its advice."""
    def check(report, cuda, lines):
        own, p = lines[0], cuda[0]
        ev = p["phase_totals"]["compile_evidence"]
        first = float(own["first_step_s"]) * 1e3
        if ev["framework"] != "torch_compile" or not abs(ev["first_ms"] - first) <= 0.25 * first:
            return "first compilation %s ms (%s), the program's first step %.0f ms" % (
                ev["first_ms"], ev["framework"], first)
        if not advice(report, "compilation"):
            return "no compilation advice: %s" % [a["id"] for a in report["advice"]]
        later = advice(report, "recompilation")
        if recompiles is None:
            if ev["recompiles"] < 1 or not later or "mark_dynamic" not in later[0]["message"]:
                return "recompiles %s, advice %s (the program: %s)" % (
                    ev["recompiles"], [a["id"] for a in report["advice"]], own.get("slow_steps"))
        elif ev["recompiles"] != recompiles or later:
            return "recompiles %s, expected %d" % (ev["recompiles"], recompiles)
        return None
    return check


def straggler(report, cuda, lines):
    """The delayed rank is last at the collectives by about its measured delay a step; the others
    wait; it never waits; what it did instead is CPU work without calls (data loading when the
    delay is in __getitem__)."""
    slow = [l for l in lines if float(l.get("delay_ms", 0)) > 0]
    if len(slow) != 1:
        return "CORPUS lines with a delay: %s" % slow
    rank, delay = int(slow[0]["rank"]), float(slow[0]["delay_ms"])
    st, adv = report.get("straggler"), advice(report, "straggler")
    if not st or st["rank"] != rank or not adv or adv[0]["rank"] != rank:
        return "straggler %s, advice %s; rank %d was delayed" % (
            st, [(a["rank"], a["message"]) for a in adv], rank)
    if not 0.5 * delay <= st["lateness_ms"] <= 1.15 * delay:
        return "rank %d late %.2f ms a step, delayed %.2f ms" % (rank, st["lateness_ms"], delay)
    what = "data_loading" if slow[0].get("delay_where") == "data" else "host_work"
    if max(st["instead_ms"], key=st["instead_ms"].get) != what:
        return "what rank %d did instead: %s, expected %s" % (rank, st["instead_ms"], what)
    for p in cuda:
        waits = p["gpu"]["idle_by_cause"]["collective"]["steady_ms_per_step"]
        if p["rank"] == rank and waits > 0.25 * delay:
            return "the delayed rank %d waits %.2f ms a step in collectives" % (rank, waits)
        if p["rank"] != rank and waits < 0.4 * delay:
            return "rank %d waits %.2f ms a step, rank %d %.2f ms late" % (
                p["rank"], waits, rank, delay)
    return None


def pageable_copy(report, cuda, lines):
    """x.cpu() each step: the GPU idle while the driver stages the copy is the copy's."""
    causes = cuda[0]["gpu"]["idle_by_cause"]
    copy, data = causes["copy"]["steady_ms_per_step"], causes["data_loading"]["steady_ms_per_step"]
    if copy <= 0 or data > 0.1 * copy:
        return "copy %.2f ms, data loading %.2f ms a step" % (copy, data)
    if any("loaded data" in a["message"] for a in advice(report, "gpu-idle")):
        return "gpu-idle blames data loading"
    return None


def pinned_copy(report, cuda, lines):
    """buf.copy_(x) into pinned memory: no staging idle and no pageable-copy advice for the loop.
    With --measure-peak the program ends with one timed x.cpu() of its own, outside the loop:
    that one pageable copy is real, and advice about it counts it alone, over the run."""
    step = program_step_ms(lines[0])
    copy = cuda[0]["gpu"]["idle_by_cause"]["copy"]["steady_ms_per_step"]
    pinned_advice = advice(report, "pinned-memory")
    measured = "measured_pageable_gbs" in lines[0]
    expected = 1 if measured else 0
    counted = [a["evidence"].get("pageable_copies") for a in pinned_advice]
    if copy > 0.1 * step or counted not in ([], [expected]) or (measured and not counted):
        return "pinned: %.2f ms a step in copies, pageable copies in the advice %s (the program " \
            "made %d), advice %s" % (copy, counted, expected, [a["id"] for a in report["advice"]])
    if any(a["saving_basis"] != "run" for a in pinned_advice):
        return "the one pageable copy after the loop is advised per step"
    return None


CAUSES = {
    "tiny_triton_1": launch_bound("BLOCK"),
    "tiny_triton_100": launch_bound("BLOCK"),
    "tiny_cupy_1": launch_bound("RawKernel"),
    "tiny_cupy_100": launch_bound("RawKernel"),
    "tiny_cuda_1": launch_bound("cudaStreamBeginCapture"),
    "tiny_cuda_100": launch_bound("cudaStreamBeginCapture"),
    "tiny_cuda_static_1": launch_bound(None),  # no wrapper: CUPTI's kernels alone
    "tiny_cuda_static_100": launch_bound(None),
    "compile_ro": compilation(0),
    "compile_default": compilation(0),
    "compile_dynamic": compilation(0),
    "compile_recompile": compilation(None),
    "straggler_": straggler,
    "cpu_copy_pageable": pageable_copy,
    "cpu_copy_nopeak": pageable_copy,
    "cpu_copy_pinned": pinned_copy,
}


def check_of(case):
    """The check of a case: its own, or its prefix's (the straggler matrix)."""
    if case in CAUSES:
        return CAUSES[case]
    return next((c for k, c in CAUSES.items() if k.endswith("_") and case.startswith(k)), None)
