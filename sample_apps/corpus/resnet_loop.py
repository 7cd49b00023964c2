#!/usr/bin/env python3
"""Corpus: the two loops most PyTorch users write — ResNet training, and batch-1 inference
(issues 29 and 30: batch norm reaches cuDNN through its legacy entries).

Style: torchvision models, no NVTX, no profiler, synthetic data made once on the host and copied
each step (`.cuda()`, pageable, as an image tensor from a decoder would be). Batch norm runs
through cuDNN's legacy batch-norm calls (cudnnBatchNormalizationForwardTraining* in training,
...ForwardInference in eval), convolutions through cuDNN's backend API (heuristic plans; benchmark
mode is never set).
  --mode train   SGD with momentum, loss.item() every step (the running loss: a sync a step);
                 --amp: bf16 autocast and channels-last (AMP already in effect);
  --mode infer   model.eval(), torch.inference_mode(), one image at a time (--batch-size 1), the
                 top class read back each step (.item(): a sync a step).

    python resnet_loop.py --mode train --model resnet18 --batch-size 32 --steps 40
    python resnet_loop.py --mode train --model resnet18 --batch-size 32 --steps 40 --amp
    python resnet_loop.py --mode infer --model resnet50 --batch-size 1 --steps 300

What a correct diagnosis says:
  - training: --steps steps, the step as the program's clock; the batch-norm kernels
    (cudnn::bn_fw_tr_*, bn_bw_*) link to the cuDNN calls that launched them, with a call site in
    this file; fp32: AMP advice by the convolutions' measured share; --amp: no AMP advice (it is
    already on), nothing about benchmark mode beyond its own estimate;
  - inference at batch 1: every kernel is short, the GPU waits on the CPU's launches
    (launch-bound; remedies: CUDA graphs / torch.compile(mode="reduce-overhead"), a larger batch),
    the .item() each step is a sync the remedy may mention; the bn_fw_inf_* kernels link to their
    cuDNN calls.

Prints its own timing last: CORPUS name=resnet_loop ... mode=... (per-step intervals end at the
step's .item(), so step_ms_median is the real step period).
"""
import argparse
import sys
import time

from corpus_common import StepClock


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("train", "infer"), default="train")
    p.add_argument("--model", default="resnet18", help="a torchvision model name")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--amp", action="store_true", help="bf16 autocast and channels-last")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
        import torchvision
    except ImportError as e:
        print("resnet_loop.py needs torch and torchvision: %s" % e, file=sys.stderr)
        return 2
    torch.manual_seed(0)
    fmt = torch.channels_last if args.amp else torch.contiguous_format
    model = getattr(torchvision.models, args.model)(weights=None, num_classes=1000)
    model = model.cuda().to(memory_format=fmt)
    g = torch.Generator().manual_seed(0)
    images = [torch.randn(args.batch_size, 3, args.image_size, args.image_size, generator=g)
              for _ in range(4)]
    labels = [torch.randint(0, 1000, (args.batch_size,), generator=g) for _ in range(4)]
    clock = StepClock()
    if args.mode == "train":
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        running = 0.0
        for i in range(args.steps):
            x = images[i % 4].cuda().to(memory_format=fmt)
            y = labels[i % 4].cuda()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            running += loss.item()  # the running loss: a sync each step
            clock.tick()
        check = running / args.steps
    else:
        model.eval()
        with torch.inference_mode():
            top = 0
            for i in range(args.steps):
                x = images[i % 4].cuda().to(memory_format=fmt)
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.amp):
                    top = model(x).argmax(dim=1)[0].item()  # the answer: a sync each step
                clock.tick()
        check = top
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    clock.report("resnet_loop", args.warmup, t_end, "step",
                 " mode=%s model=%s batch=%d amp=%d check=%.4g" % (
                     args.mode, args.model, args.batch_size, int(args.amp), check))
    return 0


if __name__ == "__main__":
    sys.exit(main())
