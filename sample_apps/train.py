#!/usr/bin/env python3
"""A small PyTorch training script whose flags switch gputrace's pathologies on and off.

Record it and watch the advice appear and disappear:

    gputrace record -o slow -- python sample_apps/train.py                   # several pathologies
    gputrace record -o fast -- python sample_apps/train.py --pin-memory --non-blocking \
        --benchmark --amp --workers 4                                        # the fixes

  pathology (advice id)   switched on by              fixed by
  pinned-memory           (default: pageable batches) --pin-memory
  non-blocking-copy       (default: blocking .to())   --non-blocking (with --pin-memory)
  cudnn-benchmark         (default: heuristics)       --benchmark
  sync-stall              --item-every-step           (leave it off)
  launch-bound            --batch-size 2              a larger --batch-size
  amp                     (default: fp32)             --amp (bf16 autocast, channels-last)
  gpu-idle                --workers 0 --slow-data MS  --workers 4

Under torchrun (WORLD_SIZE > 1) it trains with DistributedDataParallel over NCCL, one GPU per
process (LOCAL_RANK); --straggler-ms MS makes rank 1 spend MS of CPU per step, so the report's
straggler section has something to find:

    gputrace record -o ddp -- torchrun --nproc_per_node=2 sample_apps/train.py --straggler-ms 5

Data are synthetic CPU tensors served by a DataLoader, like a real input pipeline. Each step is
wrapped in an NVTX range named "step" (torch.cuda.nvtx), which gputrace uses to find the steps.
Step times are printed at the end (synchronized), with the steady state after --warmup steps.
"""
import argparse
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="resnet18", help="a torchvision model name (default resnet18)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5, help="steps left out of the steady state")
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes (fork)")
    p.add_argument("--slow-data", type=float, default=0.0, metavar="MS",
                   help="CPU time spent making each batch (simulates decoding/augmentation)")
    p.add_argument("--pin-memory", action="store_true", help="DataLoader(pin_memory=True)")
    p.add_argument("--non-blocking", action="store_true", help=".to(device, non_blocking=True)")
    p.add_argument("--benchmark", action="store_true", help="torch.backends.cudnn.benchmark=True")
    p.add_argument("--item-every-step", action="store_true",
                   help="call loss.item() every step (a device-to-host sync)")
    p.add_argument("--amp", action="store_true", help="bf16 autocast and channels-last")
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--straggler-ms", type=float, default=0.0, metavar="MS",
                   help="under torchrun: extra CPU time per step on rank 1")
    return p.parse_args(argv)


def make_dataset(torch, args):
    class SyntheticImages(torch.utils.data.Dataset):
        """A fixed pool of random CPU images, served by index (no disk, deterministic)."""

        def __init__(self, length, pool=8):
            g = torch.Generator().manual_seed(0)
            self.images = torch.randn(pool, 3, args.image_size, args.image_size, generator=g)
            self.labels = torch.randint(0, args.classes, (pool,), generator=g)
            self.length = length

        def __len__(self):
            return self.length

        def __getitem__(self, i):
            if args.slow_data > 0:  # CPU work per sample: batch time = slow_data ms
                end = time.perf_counter() + args.slow_data / 1000.0 / args.batch_size
                while time.perf_counter() < end:
                    pass
            k = i % len(self.images)
            return self.images[k].clone(), self.labels[k]

    return SyntheticImages(args.batch_size * args.steps)


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
        import torchvision
    except ImportError as e:
        print("train.py needs torch and torchvision: %s" % e, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("train.py: no CUDA device is available", file=sys.stderr)
        return 2
    import os
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world_size > 1:  # torchrun: one process per GPU, gradients all-reduced over NCCL
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        torch.distributed.init_process_group("nccl")
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cuda")
    torch.backends.cudnn.benchmark = args.benchmark

    model = getattr(torchvision.models, args.model)(num_classes=args.classes).to(device)
    memory_format = torch.channels_last if args.amp else torch.contiguous_format
    model = model.to(memory_format=memory_format)
    if world_size > 1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(make_dataset(torch, args), batch_size=args.batch_size,
                                         num_workers=args.workers, pin_memory=args.pin_memory,
                                         shuffle=False, drop_last=True,
                                         persistent_workers=args.workers > 0)

    print("train.py: %s batch %d, %d steps, workers %d, pin_memory %s, non_blocking %s, "
          "benchmark %s, item_every_step %s, amp %s" % (
              args.model, args.batch_size, args.steps, args.workers, args.pin_memory,
              args.non_blocking, args.benchmark, args.item_every_step, args.amp), flush=True)
    step_ends = []
    losses = []
    torch.cuda.synchronize()
    t_start = time.perf_counter()
    for step, (images, labels) in enumerate(loader):
        torch.cuda.nvtx.range_push("step")
        images = images.to(device, non_blocking=args.non_blocking, memory_format=memory_format)
        labels = labels.to(device, non_blocking=args.non_blocking)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
            loss = loss_fn(model(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.straggler_ms > 0 and rank == 1:  # a slow rank: CPU work the others wait for
            end = time.perf_counter() + args.straggler_ms / 1000.0
            while time.perf_counter() < end:
                pass
        if args.item_every_step:
            losses.append(loss.item())
        else:
            losses.append(loss.detach())
        torch.cuda.nvtx.range_pop()
        if step + 1 == args.warmup:
            torch.cuda.synchronize()  # the steady state starts on an empty queue
        step_ends.append(time.perf_counter())
    torch.cuda.synchronize()
    step_ends[-1] = time.perf_counter()

    times = [(b - a) * 1e3 for a, b in zip([t_start] + step_ends[:-1], step_ends)]
    tag = "rank %d: " % rank if world_size > 1 else ""
    print(tag + "step times (ms): " + " ".join("%.1f" % t for t in times))
    steady = step_ends[args.warmup:] if len(step_ends) > args.warmup else step_ends
    if len(steady) >= 2:
        per_step = (steady[-1] - step_ends[args.warmup - 1]) * 1e3 / len(steady) \
            if args.warmup > 0 else (steady[-1] - t_start) * 1e3 / len(steady)
        print(tag + "steady state: %.2f ms/step over %d steps, %.0f images/s (final loss %.3f)" % (
            per_step, len(steady), args.batch_size * 1e3 / per_step, float(losses[-1])))
    if world_size > 1:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
