#!/usr/bin/env python3
"""Step markers on the GPU (issue 21 item 2): a small PyTorch training loop whose steps are marked
the way programs mark them, one way per --marker, so that `gputrace report` can be checked against
the program's own clock (the CORPUS line printed last, as sample_apps/corpus/*.py print it).

  --marker profiler   record_function("ProfilerStep#N") around each step (what torch.profiler's
                      step() records), inside torch.autograd.profiler.emit_nvtx(): ProfilerStep#1,
                      #2... NVTX ranges (and
                      torch's aten:: ranges, which are never steps)
  --marker nvtx       torch.cuda.nvtx.range_push("train_step") / range_pop() around each step
  --marker none       nothing (the report must find the repeating launch pattern)

The report must say: profiler -> step_source_kind "profiler_step" ('ProfilerStep#N'), nvtx ->
"nvtx" ('train_step'), none -> "kernel_pattern"; median step within 10% of step_ms_median.
"""
import argparse
import statistics
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--marker", choices=["profiler", "nvtx", "none"], default="profiler")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5)
    a = p.parse_args()
    import contextlib
    import torch
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 1024, device=dev)
    prof = contextlib.nullcontext()
    nvtx_ops = contextlib.nullcontext()
    if a.marker == "profiler":
        # emit_nvtx turns record_function ranges into NVTX ranges, the ProfilerStep#N names that
        # torch.profiler's step() gives them (both at once: "Profiler is already enabled")
        nvtx_ops = torch.autograd.profiler.emit_nvtx()
    durations, ends = [], []
    with prof, nvtx_ops:
        t_prev = time.perf_counter()
        for i in range(a.steps):
            step_range = contextlib.nullcontext()
            if a.marker == "profiler":
                step_range = torch.profiler.record_function("ProfilerStep#%d" % (i + 1))
                step_range.__enter__()
            if a.marker == "nvtx":
                torch.cuda.nvtx.range_push("train_step")
            loss = model(x).square().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss.item()  # the step's sync
            if a.marker == "nvtx":
                torch.cuda.nvtx.range_pop()
            if a.marker == "profiler":
                step_range.__exit__(None, None, None)
            t = time.perf_counter()
            durations.append((t - t_prev) * 1e3)
            ends.append(t)
            t_prev = t
    torch.cuda.synchronize()
    steady = durations[a.warmup:]
    wall = (time.perf_counter() - ends[a.warmup - 1]) * 1e3 / len(steady)
    print("CORPUS name=steps_%s steps=%d warmup_steps=%d step_ms_median=%.3f step_ms_wall=%.3f "
          "sync=step" % (a.marker, a.steps, a.warmup, statistics.median(steady), wall), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
