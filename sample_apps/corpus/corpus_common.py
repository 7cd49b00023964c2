"""What the corpus programs share: the CORPUS line each prints last (its own clock, against which
the report's figures are checked), a clock of step ends, and the CPU delays the straggler and
host-bound programs add. Standard library only, so a program imports it before its framework and
T_START is as near to the process's start as Python lets a module see.

The CORPUS line: `CORPUS name=... steps=N warmup_steps=W step_ms_median=M step_ms_wall=T
sync=step|everyK|end startup_s=S ...` — the median of the steady steps' intervals (perf_counter at
the end of each step) and the steady wall time per step up to a final device sync; for a program
that syncs every step the two agree, for one that syncs every K steps or at the end only
step_ms_wall is the step period. Extra fields follow, key=value without spaces.
"""
import os
import shutil
import statistics
import sys
import tempfile
import time

T_START = time.perf_counter()


class StepClock:
    """perf_counter at the end of each step: the intervals (ms) and the end times."""

    def __init__(self):
        self.durations = []
        self.step_ends = []
        self.t_prev = time.perf_counter()

    def restart(self):
        """The next interval starts now (work between steps left out of the clock)."""
        self.t_prev = time.perf_counter()

    def tick(self):
        """End a step; returns its interval in ms."""
        t = time.perf_counter()
        self.durations.append((t - self.t_prev) * 1e3)
        self.step_ends.append(t)
        self.t_prev = t
        return self.durations[-1]

    def report(self, name, warmup, t_end, sync, extra=""):
        report(name, warmup, self.durations, self.step_ends, t_end, sync, extra)


def report(name, warmup, durations, step_ends, t_end, sync, extra=""):
    """One machine-readable line: median of the steady per-step intervals, and the steady wall time
    per step up to a final device sync (the period that counts when steps do not sync)."""
    warmup = max(0, min(warmup, len(durations)))
    steady = durations[warmup:]
    n = len(steady)
    nan = float("nan")
    wall = (t_end - step_ends[warmup - 1]) * 1e3 / n if n and warmup > 0 else nan
    startup = step_ends[warmup - 1] - T_START if warmup > 0 else nan
    emit("CORPUS name=%s steps=%d warmup_steps=%d step_ms_median=%.3f step_ms_wall=%.3f "
         "sync=%s startup_s=%.2f%s" % (name, len(durations), warmup,
                                       statistics.median(steady) if n else nan, wall,
                                       sync, startup, extra))


def print_steps(name, durations, extra=""):
    """Every step's interval, for programs whose steps differ (ranks, recompiles, new shapes):
    `CORPUS_STEPS name=... ms=a,b,...` (not a CORPUS line: the tests read those by prefix)."""
    emit("CORPUS_STEPS name=%s%s ms=%s" % (name, extra, ",".join("%.3f" % d for d in durations)))


def emit(line):
    """One line in one write: ranks launched by torchrun share one stdout, and print() writes the
    text and its newline apart, so two ranks' lines could interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def slow_steps(durations, factor=10.0, floor_ms=100.0):
    """(index, ms) of the steps more than `factor` times the median and longer than floor_ms:
    compilations, autotuning, first uses."""
    if not durations:
        return []
    median = statistics.median(durations)
    return [(i, d) for i, d in enumerate(durations) if d > factor * median and d > floor_ms]


def format_slow(slow):
    """slow_steps as one field value: index:ms,index:ms (or '-' when none)."""
    return ",".join("%d:%.0f" % (i, d) for i, d in slow) or "-"


def busy_cpu(ms):
    """CPU work, not sleep, for `ms` milliseconds (a decoder, an augmentation, Python overhead);
    returns the time it took in ms."""
    t0 = time.perf_counter()
    end = t0 + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        for i in range(200):
            x += i * i
    return (time.perf_counter() - t0) * 1e3


def delay(ms, kind):
    """Spend `ms` milliseconds on the CPU without CUDA calls: kind 'busy' computes, 'sleep' waits
    (a network read, a lock, a slow file system). Returns the time it took in ms."""
    if ms <= 0:
        return 0.0
    if kind == "busy":
        return busy_cpu(ms)
    t0 = time.perf_counter()
    time.sleep(ms / 1e3)
    return (time.perf_counter() - t0) * 1e3


def fresh_cache_dirs(*variables):
    """A first run's empty caches: each of the environment variables not already set names a new
    temporary folder. Returns the folders made (remove_dirs removes them at the end)."""
    made = []
    for var in variables:
        if var not in os.environ:
            os.environ[var] = tempfile.mkdtemp(prefix="corpus-cache-")
            made.append(os.environ[var])
    return made


def remove_dirs(dirs):
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
