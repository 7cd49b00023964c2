#!/usr/bin/env python3
"""Corpus: a DataLoader-bound training loop, and its fix (--workers 4 --pin-memory).

Style: a map-style torch Dataset whose __getitem__ does CPU-heavy work (a stand-in for decoding
and augmenting an image: --sample-ms of NumPy work per sample), a DataLoader, a small CNN, and the
usual loop: batch.to(device), forward, backward, step, loss.item() for the running loss (a sync
each step). No NVTX, no profiler hooks.

  python dataloader_bound.py                                      # --workers 0: data-bound
  python dataloader_bound.py --workers 4 --pin-memory             # the fix

What a correct diagnosis says:
  - steps: --steps (default 60), one per loss.item() sync, each starting with a batch copy;
  - --workers 0: each batch costs the main thread about batch-size x sample-ms (64 x 0.25 ms,
    about 16 ms, plus collating) of CPU before its copy, while the GPU step is under 10 ms: the GPU
    is idle most of each step, waiting on data loading in the training process (the main
    process, in the DataLoader's __next__); pageable batch copies; advice: DataLoader workers
    (num_workers) and pin_memory=True with non_blocking copies;
  - --workers 4 --pin-memory: four forked worker processes make the batches in parallel
    (about 5 ms a batch), the copies are pinned and asynchronous, the GPU is busy most of each
    step: no data-loading advice (and no pinned-memory advice).

Prints its own timing last: CORPUS name=dataloader_bound (name=dataloader_fixed with workers) ...
data_wait_ms_median=... (the time blocked in next(loader)); per-step intervals end at
loss.item(), so step_ms_median is the real step period.
"""
import time

from corpus_common import report  # the CORPUS line; its clock starts here

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, default=0, help="DataLoader num_workers")
    p.add_argument("--pin-memory", action="store_true",
                   help="DataLoader(pin_memory=True) and .to(non_blocking=True)")
    p.add_argument("--sample-ms", type=float, default=0.25, help="CPU ms spent per sample")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--image-size", type=int, default=128)
    p.add_argument("--width", type=int, default=128, help="channels of the first conv block")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5)
    return p.parse_args(argv)


class AugmentedImages:
    """Synthetic images with a CPU-heavy 'augmentation': NumPy work until --sample-ms has passed
    (real work, not sleep, so workers load the CPUs as decoders do)."""

    def __init__(self, n, size, sample_ms):
        self.n, self.size, self.sample_ms = n, size, sample_ms

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        img = rng.standard_normal((3, self.size, self.size), dtype=np.float32)
        end = time.perf_counter() + self.sample_ms / 1e3
        while time.perf_counter() < end:
            img = np.tanh(img * 0.9 + 0.05)  # stands in for decode + augment
        return img, int(i % 10)


def make_model(torch, width):
    nn = torch.nn

    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    w = width
    layers = block(3, w, 1) + block(w, 2 * w, 2) + block(2 * w, 4 * w, 2) + block(4 * w, 4 * w, 2)
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * w, 10))


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
    except ImportError as e:
        print("dataloader_bound.py needs torch: %s" % e, file=sys.stderr)
        return 2
    device = torch.device("cuda")
    model = make_model(torch, args.width).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = AugmentedImages(args.steps * args.batch_size, args.image_size, args.sample_ms)
    loader = DataLoader(data, batch_size=args.batch_size, shuffle=False,
                        num_workers=args.workers, pin_memory=args.pin_memory,
                        persistent_workers=args.workers > 0)
    durations, step_ends, waits = [], [], []
    running_loss = 0.0
    t_prev = time.perf_counter()
    batches = iter(loader)
    for _ in range(args.steps):
        t_wait = time.perf_counter()
        images, labels = next(batches)
        waits.append((time.perf_counter() - t_wait) * 1e3)
        images = images.to(device, non_blocking=args.pin_memory)
        labels = labels.to(device, non_blocking=args.pin_memory)
        loss = F.cross_entropy(model(images), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running_loss += loss.item()  # the running loss: a sync each step
        t = time.perf_counter()
        durations.append((t - t_prev) * 1e3)
        step_ends.append(t)
        t_prev = t
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    name = "dataloader_bound" if args.workers == 0 else "dataloader_fixed"
    report(name, args.warmup, durations, step_ends, t_end, "step",
           " workers=%d pin_memory=%d data_wait_ms_median=%.3f" % (
               args.workers, int(args.pin_memory), statistics.median(waits[args.warmup:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
