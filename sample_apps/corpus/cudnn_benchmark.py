#!/usr/bin/env python3
"""Corpus: cuDNN benchmark mode in a short run, and with input shapes that change (issue 29).

Style: a plain PyTorch training loop (a small CNN or torchvision's ResNet-18, SGD, loss.item()
every step for the running loss: a sync each step, so each step's interval is its real period)
with torch.backends.cudnn.benchmark set by --benchmark. In benchmark mode PyTorch autotunes every
new convolution signature (shape, dtype, layout): cuDNN's frontend builds several plans and times
each (cudnn_frontend's time_sorted_plan, with syncs around every candidate), so each step that
meets a new input shape autotunes all its convolutions again. --shapes N makes the input size
change: a new size joins every --new-every steps and each step takes the next size of those seen
so far (the shape changes nearly every step, and new ones keep coming); --bucket B pads each size
up to a multiple of B (few distinct shapes: the remedy).

    python cudnn_benchmark.py --model resnet18 --benchmark 1 --steps 20   # autotuning dominates
    python cudnn_benchmark.py --model resnet18 --benchmark 0 --steps 20   # benchmark already off
    python cudnn_benchmark.py --benchmark 1 --shapes 8 --new-every 4 --steps 40   # recurring
    python cudnn_benchmark.py --benchmark 1 --shapes 8 --new-every 4 --steps 40 --bucket 32

What a correct diagnosis says:
  - benchmark 1, one shape, a short run: most of the GPU-active run is the first step's
    autotuning (new_shape_ms in the CORPUS line); its saving is that phase's time, so its
    severity follows it (not "info"); remedy in PyTorch terms: benchmark off for short runs, or
    keep it for long ones (it pays back after N steps);
  - benchmark 0: no autotuning advice (the setting is already off); the first convolutions' slow
    first execution (one plan each, no find call) is first-use cost, not autotuning;
  - --shapes: autotuning recurs after the first steps, once per new input shape (input_shapes in
    the CORPUS line), named as such with the count of distinct shapes over time and the remedy
    (fixed or bucketed shapes, or benchmark off); its syncs are the autotuner's (call sites in
    cudnn_frontend), counted once as autotuning, never again as sync-stall;
  - --bucket: fewer shapes, fewer autotuning steps; benchmark 0 with shapes: a plan built per new
    shape (heuristics), no autotuning.

Prints its own timing last: CORPUS name=cudnn_benchmark ... new_shape_steps=K new_shape_ms=T
(the steps that met a new input shape and their summed time, autotuning included) and a
CORPUS_STEPS line with every step's interval.
"""
import argparse
import sys
import time

from corpus_common import StepClock, format_slow, print_steps, slow_steps, T_START


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=("small", "resnet18"), default="small")
    p.add_argument("--benchmark", type=int, choices=(0, 1), default=1,
                   help="torch.backends.cudnn.benchmark")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, default=64, help="the first (smallest) input size")
    p.add_argument("--size-step", type=int, default=8, help="pixels between input sizes")
    p.add_argument("--shapes", type=int, default=1, help="distinct input sizes")
    p.add_argument("--new-every", type=int, default=4, help="steps between new input sizes")
    p.add_argument("--bucket", type=int, default=0, help="pad sizes up to a multiple (0: off)")
    p.add_argument("--width", type=int, default=64, help="channels of the small CNN's first layer")
    p.add_argument("--layers", type=int, default=4, help="convolutions of the small CNN")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    return p.parse_args(argv)


def small_cnn(nn, width, layers):
    """conv-BN-ReLU blocks, every other one halving the size and doubling the channels."""
    mods = [nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()]
    c = width
    for i in range(1, layers):
        down = i % 2 == 1
        out = 2 * c if down else c
        mods += [nn.Conv2d(c, out, 3, 2 if down else 1, 1, bias=False), nn.BatchNorm2d(out),
                 nn.ReLU()]
        c = out
    return nn.Sequential(*mods, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 10))


def input_size(step, args):
    """The raw size of a step's input: a new size joins every --new-every steps, and each step
    takes the next of the sizes seen so far."""
    introduced = min(args.shapes, 1 + step // max(1, args.new_every))
    return args.image_size + args.size_step * (step % introduced)


def padded(size, bucket):
    return -(-size // bucket) * bucket if bucket > 0 else size


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print("cudnn_benchmark.py needs torch: %s" % e, file=sys.stderr)
        return 2
    torch.backends.cudnn.benchmark = bool(args.benchmark)
    torch.manual_seed(0)
    if args.model == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(weights=None, num_classes=10)
    else:
        model = small_cnn(torch.nn, args.width, args.layers)
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    seen, new_shape_ms, new_steps = set(), 0.0, 0
    clock = StepClock()
    running_loss = 0.0
    for step in range(args.steps):
        raw = input_size(step, args)
        size = padded(raw, args.bucket)
        x = torch.randn(args.batch_size, 3, raw, raw, device="cuda")
        if size != raw:
            x = F.pad(x, (0, size - raw, 0, size - raw))  # bucketing: zeros to the right/bottom
        y = torch.randint(0, 10, (args.batch_size,), device="cuda")
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running_loss += loss.item()  # the running loss: a sync each step
        ms = clock.tick()
        if size not in seen:
            seen.add(size)
            new_steps += 1
            new_shape_ms += ms
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    print_steps("cudnn_benchmark", clock.durations)
    clock.report("cudnn_benchmark", args.warmup, t_end, "step",
                 " model=%s benchmark=%d input_shapes=%d raw_sizes=%d new_shape_steps=%d "
                 "new_shape_ms=%.1f first_step_s=%.2f run_s=%.2f slow_steps=%s" % (
                     args.model, args.benchmark, len(seen),
                     len({input_size(s, args) for s in range(args.steps)}), new_steps,
                     new_shape_ms, clock.durations[0] / 1e3, t_end - T_START,
                     format_slow(slow_steps(clock.durations))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
