#!/usr/bin/env python3
"""Which capture-window transitions are safe for CUDA graphs on the real CUPTI? Runs under
LD_PRELOAD=libgputrace.so GPUTRACE_CAPTURE=profiler-api (torch.cuda.profiler.start/stop open and
close windows; between them gputrace detaches CUPTI unless GPUTRACE_CUPTI_DETACH=0). The graph is
a few small kernels captured with torch.cuda.graph. Cases (argv[1]):
  in_window     instantiate inside window 1, replay after it closes (CUPTI detached), sync
  before        instantiate before any window (CUPTI never attached), replay in a window and
                after it, sync
  across        instantiate inside window 1, replay inside window 2 (CUPTI attached anew), sync
  plain         no windows: capture, replay, sync (the control, traced or not)
Prints GRAPH_DETACH case=<case> ok=<0|1> error=<...>; exit status 0 either way."""
import sys
import time

import torch

case = sys.argv[1]
dev = torch.device("cuda")
x = torch.randn(1024, 1024, device=dev)
torch.cuda.synchronize()


def make_graph():
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # the same work as captured: cuBLAS sets up its workspace here
            y = (x * 2 + 1).relu()
            y = y @ y
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = (x * 2 + 1).relu()
        y = y @ y
    return g


def replay(g, n=50):
    for _ in range(n):
        g.replay()
    torch.cuda.synchronize()


def window(on):
    (torch.cuda.profiler.start if on else torch.cuda.profiler.stop)()
    if not on:
        time.sleep(0.5)  # closed, then detached on a later writer round / at the next call
        torch.zeros(1, device=dev)
        torch.cuda.synchronize()  # a context-wide sync: its return makes an armed detach
        time.sleep(0.3)


# Each case as its sequence: O opens a window, C closes it, G makes the graph, R replays it.
CASES = {"in_window": "O G R C R", "before": "G R O R C R", "plain": "G R",
         "across": "O G R C O R C R"}
err = ""
try:
    g = None
    for op in CASES[case].split():
        if op in "OC":
            window(op == "O")
        elif op == "G":
            g = make_graph()
        else:
            replay(g)
    torch.cuda.synchronize()
    ok = 1
except Exception as e:  # the failure is what this script measures
    ok, err = 0, str(e).splitlines()[0][:200]
print(f"GRAPH_DETACH case={case} ok={ok} error={err}", flush=True)
