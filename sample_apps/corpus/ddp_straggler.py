#!/usr/bin/env python3
"""Corpus: DDP over gloo on one GPU with one rank delayed — the straggler matrix (issue 30), and
the same program with no delay (issue 29: a DDP run that never turns cuDNN benchmark mode on).

Style: torch.nn.parallel.DistributedDataParallel with the gloo backend (CPU collectives: the
gradients are copied to the host and summed over TCP), every rank on cuda:0, launched by torchrun
(several ranks share the GPU; gloo allows it). Each step: a batch from a DataLoader (map-style
dataset of ready CPU batches, no workers), copied to the GPU, forward, backward (DDP all-reduces
the gradient buckets as they fill), SGD step, and with --sync 1 loss.item() (a sync each step).
One rank (--delay-rank) spends --delay-ms each step without CUDA calls, as --delay-kind says
(busy: CPU work; sleep: waiting), at --delay-where:
  forward   after the batch's copy, before the forward pass;
  backward  inside the backward pass: a hook on the gradient of a middle layer's output, so it
            runs on the autograd engine's thread, after some buckets were already all-reduced;
  data      inside the dataset's __getitem__ (data loading), before the batch's copy.
--model conv is torchvision's ResNet-18 (batch norm, cuDNN convolutions; benchmark mode never
set), --model mlp a three-layer MLP. The ranks meet at a barrier before the first step.

    torchrun --standalone --nproc_per_node=2 ddp_straggler.py --model conv --delay-rank 1 \
        --delay-kind sleep --delay-where forward --sync 0
    torchrun --standalone --nproc_per_node=2 ddp_straggler.py --model conv --delay-ms 0  # no delay

What a correct diagnosis says:
  - the ranks' steps have one period (the all-reduce makes every rank wait for the last);
  - with a delay: the delayed rank (named, with its pid) arrives last at the all-reduce by about
    --delay-ms per step, and what it did instead is said: CPU work or waiting without CUDA calls
    (on the main thread, or on the autograd thread for backward), or data loading for data; the
    other ranks wait in the collective that long — one merged line naming the ranks, not a cause
    per rank; the same whether or not the steps sync (--sync), whichever rank is slow, with 2 or
    4 ranks, convolutions or an MLP;
  - without a delay: no straggler; benchmark mode is never on, so the first convolutions (one
    plan each, no find call) are first-use cost, not autotuning, and nothing advises turning
    benchmark off.

Prints, per rank: a CORPUS_STEPS line with every step's interval, then CORPUS name=ddp_straggler
rank=R world=N delay_rank=D delay_ms=MS (this rank's measured delay per step, 0 on the others)
delay_kind=... delay_where=... model=... sync=step|end ... (step intervals end after opt.step(),
or after loss.item() with --sync 1).
"""
import argparse
import os
import statistics
import sys
import time

from corpus_common import StepClock, delay, print_steps


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=("conv", "mlp"), default="conv")
    p.add_argument("--delay-rank", type=int, default=1)
    p.add_argument("--delay-ms", type=float, default=20.0, help="0: no delay")
    p.add_argument("--delay-kind", choices=("busy", "sleep"), default="sleep")
    p.add_argument("--delay-where", choices=("forward", "backward", "data"), default="forward")
    p.add_argument("--sync", type=int, choices=(0, 1), default=0, help="loss.item() every step")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=0, help="0: 32 (conv) or 128 (mlp)")
    p.add_argument("--image-size", type=int, default=64)
    return p.parse_args(argv)


class Delay:
    """The delay of this rank at one place; records how long each took (ms)."""

    def __init__(self, args, rank, where):
        self.on = rank == args.delay_rank and args.delay_where == where and args.delay_ms > 0
        self.ms, self.kind, self.spent = args.delay_ms, args.delay_kind, []

    def __call__(self):
        if self.on:
            self.spent.append(delay(self.ms, self.kind))


def make_model(torch, args):
    if args.model == "conv":
        import torchvision
        model = torchvision.models.resnet18(weights=None, num_classes=10)
        return model, model.layer2
    nn = torch.nn
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
    return model, model[2]


def delay_in_backward(module, backward_delay):
    """Run backward_delay when the gradient of module's output is computed (mid-backward)."""
    def on_grad(grad):
        backward_delay()
        return None  # the gradient unchanged

    def on_forward(mod, inputs, output):
        if output.requires_grad:
            output.register_hook(on_grad)

    module.register_forward_hook(on_forward)


def make_loader(torch, args, batch, data_delay):
    class ReadyBatches(torch.utils.data.Dataset):
        """A few CPU batches made once, served in turn (the delay stands in for decoding)."""

        def __init__(self):
            g = torch.Generator().manual_seed(0)
            shape = (batch, 3, args.image_size, args.image_size) if args.model == "conv" \
                else (batch, 512)
            self.batches = [(torch.randn(shape, generator=g),
                             torch.randint(0, 10, (batch,), generator=g)) for _ in range(4)]

        def __len__(self):
            return args.steps

        def __getitem__(self, i):
            data_delay()
            return self.batches[i % len(self.batches)]

    return torch.utils.data.DataLoader(ReadyBatches(), batch_size=None, shuffle=False,
                                       num_workers=0)


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
        import torch.nn.functional as F
        from torch.nn.parallel import DistributedDataParallel as DDP
    except ImportError as e:
        print("ddp_straggler.py needs torch: %s" % e, file=sys.stderr)
        return 2
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        print("ddp_straggler.py: launch it with torchrun (python -m torch.distributed.run)",
              file=sys.stderr)
        return 2
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(0)  # every rank shares the one GPU
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    batch = args.batch_size or (32 if args.model == "conv" else 128)
    delays = {w: Delay(args, rank, w) for w in ("forward", "backward", "data")}
    model, middle = make_model(torch, args)
    delay_in_backward(middle, delays["backward"])
    ddp = DDP(model.cuda(), device_ids=[0])
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loader = make_loader(torch, args, batch, delays["data"])

    dist.barrier()
    clock = StepClock()
    losses = []
    for x_cpu, y_cpu in loader:
        x, y = x_cpu.cuda(), y_cpu.cuda()
        delays["forward"]()
        loss = F.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # gloo all-reduce of the gradient buckets: waits for every rank
        opt.step()
        losses.append(loss.item() if args.sync else loss.detach())
        clock.tick()
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    spent = delays[args.delay_where].spent
    tag = " rank=%d" % rank
    print_steps("ddp_straggler", clock.durations, tag)
    clock.report("ddp_straggler", args.warmup, t_end, "step" if args.sync else "end",
                 "%s world=%d delay_rank=%d delay_ms=%.2f delay_kind=%s delay_where=%s model=%s "
                 "batch=%d pid=%d loss=%.4f" % (
                     tag, world, args.delay_rank, statistics.median(spent) if spent else 0.0,
                     args.delay_kind, args.delay_where, args.model, batch, os.getpid(),
                     float(losses[-1])))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
