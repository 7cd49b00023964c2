#!/usr/bin/env python3
"""Corpus: DDP over gloo with a slow rank — two processes sharing the one GPU.

Style: torch.nn.parallel.DistributedDataParallel with the gloo backend (CPU collectives; the
gradients are copied to the host and summed over TCP), two ranks on cuda:0, a small MLP, the
loss read back every step for logging (loss.item(), a sync). --slow-rank R --slow-ms MS makes
rank R spend MS milliseconds of CPU (busy work, as a slower input pipeline would) before each
forward pass. Launch with torchrun, or alone (it then spawns --nproc ranks itself):

    gputrace record -o ddp_gloo_slow -- python -m torch.distributed.run --standalone \
        --nproc_per_node=2 sample_apps/corpus/ddp_gloo_slow.py --slow-rank 1 --slow-ms 15
    gputrace record -o ddp_gloo_slow -- python sample_apps/corpus/ddp_gloo_slow.py --slow-rank 1

What a correct diagnosis says:
  - two ranks (two processes, one GPU), --steps (default 100) steps each, the same step period on
    both (the gradient all-reduce makes every rank wait for the slowest);
  - rank 1 is the straggler: it spends --slow-ms (15 ms) of CPU per step before its forward pass
    while rank 0 waits in the all-reduce (gloo) for that long each step; advice names rank 1 (and
    its pid) and the CPU time before its forward pass, not the GPU or the copies.

Prints its own timing last, one line per rank: CORPUS name=ddp_gloo_slow rank=R ... (per-step
intervals end at loss.item(), so step_ms_median is the real step period of that rank).
"""
import os
import time

from corpus_common import report  # the CORPUS line; its clock starts here

import argparse  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--slow-rank", type=int, default=-1, help="the rank made slow (-1: none)")
    p.add_argument("--slow-ms", type=float, default=15.0, help="CPU ms per step on --slow-rank")
    p.add_argument("--nproc", type=int, default=2, help="ranks to spawn when not under torchrun")
    return p.parse_args(argv)


def busy_cpu(ms):
    """CPU work, not sleep: a real slow rank computes (decoding, augmentation, Python overhead)."""
    end = time.perf_counter() + ms / 1e3
    x = 0
    while time.perf_counter() < end:
        for i in range(200):
            x += i * i
    return x


def run_rank(rank, world, args):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.cuda.set_device(0)  # both ranks share the one GPU
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    w = args.width
    model = torch.nn.Sequential(torch.nn.Linear(512, w), torch.nn.ReLU(), torch.nn.Linear(w, w),
                                torch.nn.ReLU(), torch.nn.Linear(w, 10)).cuda()
    ddp = DDP(model, device_ids=[0])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(args.batch_size, 512, device="cuda")
    y = torch.randint(0, 10, (args.batch_size,), device="cuda")
    durations, step_ends = [], []
    t_prev = time.perf_counter()
    for _ in range(args.steps):
        if rank == args.slow_rank:
            busy_cpu(args.slow_ms)
        loss = F.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # gloo all-reduce of the gradients: waits for every rank
        opt.step()
        loss_value = loss.item()  # logging: the step's sync
        t = time.perf_counter()
        durations.append((t - t_prev) * 1e3)
        step_ends.append(t)
        t_prev = t
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    report("ddp_gloo_slow", args.warmup, durations, step_ends, t_end, "step",
           " rank=%d world=%d slow_rank=%d slow_ms=%.1f pid=%d loss=%.4f" % (
               rank, world, args.slow_rank, args.slow_ms if rank == args.slow_rank else 0.0,
               os.getpid(), loss_value))
    dist.destroy_process_group()


def spawned(rank, world, args, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    run_rank(rank, world, args)


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch.multiprocessing as mp
    except ImportError as e:
        print("ddp_gloo_slow.py needs torch: %s" % e, file=sys.stderr)
        return 2
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # under torchrun
        run_rank(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return 0
    with socket.socket() as s:  # a free port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(spawned, args=(args.nproc, args, port), nprocs=args.nproc, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
