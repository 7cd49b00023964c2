#!/usr/bin/env python3
"""Two capture windows opened and closed by the capture signal in a PyTorch loop (run under
LD_PRELOAD=libgputrace.so GPUTRACE_CAPTURE=signal), or with `profiler-api` as argument by
torch.cuda.profiler.start()/stop() (GPUTRACE_CAPTURE=profiler-api, where CUPTI attaches inside
the application's cudaProfilerStart): between them gputrace detaches CUPTI
(GPUTRACE_CUPTI_DETACH) and attaches it again at the second window. Each window runs the same
100 rounds of an add, a conv2d (cuDNN) and a matmul (cuBLAS); the trace must hold the kernels of
both windows, linked to their calls, and nothing between them."""
import os
import signal
import sys
import time

import torch
import torch.nn.functional as F

dev = torch.device("cuda")
x = torch.zeros(256, device=dev)
img = torch.randn(4, 16, 32, 32, device=dev)
w = torch.randn(16, 16, 3, 3, device=dev)
m = torch.randn(64, 64, device=dev)


def rounds(n):
    for _ in range(n):
        x.add_(1.0)
        F.conv2d(img, w, padding=1)
        torch.mm(m, m)
    torch.cuda.synchronize()


PROFILER_API = sys.argv[1:] == ["profiler-api"]


def toggle(on):
    if PROFILER_API:
        (torch.cuda.profiler.start if on else torch.cuda.profiler.stop)()
    else:
        os.kill(os.getpid(), signal.SIGUSR2)
        time.sleep(0.3)  # the writer switches on its next round


rounds(20)  # outside any window: not recorded
for window in range(2):
    toggle(True)
    rounds(100)
    toggle(False)
    time.sleep(0.6)  # closed, then detached on a later round
    rounds(50)  # between windows: not recorded
print("detach_check done", flush=True)
