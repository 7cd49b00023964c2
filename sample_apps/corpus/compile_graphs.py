#!/usr/bin/env python3
"""Corpus: torch.compile(mode="reduce-overhead") — a training step replayed as CUDA graphs.

Style: an MLP whose loss function is wrapped in torch.compile(mode="reduce-overhead"): Inductor
compiles the forward and backward (Triton kernels, compiled by a pool of worker processes), then
CUDA graph trees record them and replay each step with one cudaGraphLaunch per graph; the
optimizer (fused AdamW) stays eager. torch.compiler.cudagraph_mark_step_begin() opens each step,
as PyTorch's documentation asks for training loops. The loss is read back every --log-every steps.
The Inductor and Triton caches are fresh folders (unless set): a first run, compiling.

What a correct diagnosis says:
  - start-up: compilation (Dynamo, Inductor, Triton/ptxas in compile-worker processes) and the
    CUDA graph recording of the first steps, several seconds with the GPU idle;
  - steps: --steps (default 200), each two graph launches (forward, backward) and the fused
    optimizer's kernels: the kernels inside the graphs repeat every step — repeating steps exist;
  - the GPU is busy most of each step (launch overhead already removed by the graphs): no
    launch-bound advice; the compile workers are helper processes, not ranks.

    gputrace record -o compile_graphs -- python sample_apps/corpus/compile_graphs.py

Prints its own timing last: CORPUS name=compile_graphs ... sync=every10 (steps sync only when the
loss is logged, so the steady period is step_ms_wall, measured up to a final synchronize).
"""
import time

from corpus_common import fresh_cache_dirs, remove_dirs, report  # its clock starts here

import argparse  # noqa: E402
import sys  # noqa: E402

MADE_DIRS = fresh_cache_dirs("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")  # a first run


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10,
                   help="steps left out of the timing (ends on a logging sync)")
    p.add_argument("--log-every", type=int, default=10, help="read the loss back every N steps")
    args = p.parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print("compile_graphs.py needs torch: %s" % e, file=sys.stderr)
        return 2

    torch.manual_seed(0)
    w = args.width
    model = torch.nn.Sequential(torch.nn.Linear(1024, w), torch.nn.GELU(), torch.nn.Linear(w, w),
                                torch.nn.GELU(), torch.nn.Linear(w, w), torch.nn.GELU(),
                                torch.nn.Linear(w, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)

    @torch.compile(mode="reduce-overhead")
    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    x = torch.randn(args.batch_size, 1024, device="cuda")
    y = torch.randint(0, 10, (args.batch_size,), device="cuda")
    durations, step_ends, losses = [], [], []
    t_prev = time.perf_counter()
    for i in range(args.steps):
        torch.compiler.cudagraph_mark_step_begin()
        loss = loss_fn(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if (i + 1) % args.log_every == 0:
            losses.append(loss.item())  # logging: the only sync
        t = time.perf_counter()
        durations.append((t - t_prev) * 1e3)
        step_ends.append(t)
        t_prev = t
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    remove_dirs(MADE_DIRS)
    report("compile_graphs", args.warmup, durations, step_ends, t_end,
           "every%d" % args.log_every, " first_step_s=%.2f" % (durations[0] / 1e3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
