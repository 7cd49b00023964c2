"""A second independent check of `gputrace doctor` (tools/gpu/doctor.sh): PyTorch's own copies
(pageable and pinned, 64 MiB) and 8192^3 matmuls in fp32, TF32 and bf16, timed with CUDA events;
best and median of the repetitions, like doctor."""
import statistics

import torch

N_BYTES = 64 << 20
dev = torch.device("cuda:0")


def timed(fn, reps):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b))
    return out


def report(what, work, times_ms, unit):
    rates = sorted(work / (t * 1e-3) for t in times_ms)
    print("%-16s %9.2f %9.2f %s" % (what, rates[-1], statistics.median(rates), unit))


print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
page = torch.empty(N_BYTES, dtype=torch.uint8).fill_(1)
pin = torch.empty(N_BYTES, dtype=torch.uint8, pin_memory=True).fill_(1)
d = torch.empty(N_BYTES, dtype=torch.uint8, device=dev)
d2 = torch.empty_like(d)
report("H2D pageable", N_BYTES / 1e9, timed(lambda: d.copy_(page), 10), "GB/s")
report("H2D pinned", N_BYTES / 1e9, timed(lambda: d.copy_(pin), 10), "GB/s")
report("D2H pageable", N_BYTES / 1e9, timed(lambda: page.copy_(d), 10), "GB/s")
report("D2H pinned", N_BYTES / 1e9, timed(lambda: pin.copy_(d), 10), "GB/s")
report("D2D", N_BYTES / 1e9, timed(lambda: d2.copy_(d), 10), "GB/s")

n = 8192
flop = 2.0 * n ** 3
for name, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                          ("bf16", torch.bfloat16, False)):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.rand(n, n, device=dev, dtype=dtype) * 2 - 1
    b = torch.rand(n, n, device=dev, dtype=dtype) * 2 - 1
    report("GEMM " + name, flop / 1e12, timed(lambda: a @ b, 10), "TFLOPS")
