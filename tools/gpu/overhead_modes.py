#!/usr/bin/env python3
"""Issue 18 items 3-5 on a GPU: the modes that bound gputrace's cost, checked end to end with
PyTorch (tools/gpu/overhead_modes.sh runs it). One mode per call, in a fresh process under
LD_PRELOAD=libgputrace.so; the program changes nothing for gputrace except, where the mode is about
it, signalling itself or touching a trigger file the way a user would from outside.

    overhead_modes.py MODE --steps N [--trigger PATH] [--abort]
MODE: plain (N ResNet-18 b4 steps), signal (SIGUSR2 before step N/3 and before 2N/3: the middle
third is a capture window, or a flight-recorder trigger), trigger (the same with PATH created and
removed). Prints "STEP_MS <median of the steps after the first 5>"; --sleep-ms spaces the steps
out (a longer run for the flight recorder); --abort ends with os.abort() (a crash).
"""
import argparse
import os
import signal
import statistics
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["plain", "signal", "trigger"])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--trigger", default="")
    ap.add_argument("--abort", action="store_true")
    ap.add_argument("--sleep-ms", type=float, default=0)
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = False
    model = torchvision.models.resnet18().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (4,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    marks = {a.steps // 3: 1, 2 * a.steps // 3: 0}
    times = []
    for i in range(a.steps):
        if a.mode != "plain" and i in marks:
            if a.mode == "signal":
                os.kill(os.getpid(), signal.SIGUSR2)
            elif marks[i]:
                open(a.trigger, "w").close()
            else:
                os.unlink(a.trigger)
            time.sleep(0.5)  # gputrace's writer thread makes the switch (every GPUTRACE_FLUSH_MS)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
        if a.sleep_ms:
            time.sleep(a.sleep_ms / 1e3)
    print("STEP_MS %.3f" % statistics.median(times[5:]), flush=True)
    if a.abort:
        os.abort()


if __name__ == "__main__":
    main()
