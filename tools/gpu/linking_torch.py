#!/usr/bin/env python3
"""linking_torch.py — PyTorch programs whose kernels come from cuDNN's legacy batch norm (issue 30),
for tools/gpu/um_and_linking.sh. A ResNet (torchvision's resnet18 when importable, else a small
one with the same conv-bn-relu blocks) in the default setup: cuDNN on, NCHW, float32.

  train  --steps N   training steps at batch 32 (cudnnBatchNormalizationForwardTrainingEx and
                     BackwardEx per BN layer, plus convolutions through cuDNN's backend API)
  infer  --steps N   batch-1 inference in eval mode (cudnnBatchNormalizationForwardInference)

Every step is an NVTX range "step". Prints its own timing last:
LINKING name=torch_<mode> steps= step_ms_median=."""
import argparse
import statistics
import sys
import time


def small_resnet(nn):
    def block(cin, cout, stride):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                         nn.ReLU(inplace=True), block(64, 64, 1), block(64, 128, 2),
                         block(128, 256, 2), block(256, 512, 2), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(512, 1000))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["train", "infer"])
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    import torch
    import torch.nn as nn
    try:
        import torchvision
        model = torchvision.models.resnet18(num_classes=1000)
        arch = "torchvision resnet18"
    except Exception:
        model = small_resnet(nn)
        arch = "small resnet (no torchvision)"
    dev = torch.device("cuda")
    model = model.to(dev)
    batch = 32 if args.mode == "train" else 1
    x = torch.randn(batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (batch,), device=dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    if args.mode == "infer":
        model.eval()
    times = []
    for i in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        t0 = time.perf_counter()
        if args.mode == "train":
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        else:
            with torch.no_grad():
                model(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
        torch.cuda.nvtx.range_pop()
    steady = times[len(times) // 3:]
    print("model", arch, "cudnn", torch.backends.cudnn.version(), "torch", torch.__version__)
    print("LINKING name=torch_%s steps=%d step_ms_median=%.3f" %
          (args.mode, args.steps, statistics.median(steady)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
