#!/usr/bin/env python3
"""gen_summaries.py — N synthetic per-rank summaries (the format `gputrace report --summary`
writes, docs/report-schema.md) of a data-parallel job with injected stragglers, seeded, and the
truth beside them: which rank was late in each step.

    gen_summaries.py OUT_DIR [--ranks N] [--per-host K] [--steps S] [--collectives C]
                     [--scenario rank|host|gpu|random|none] [--seed X] [--delay-ms D]

Writes OUT_DIR/rank<R>.summary.json (one process each) and OUT_DIR/truth.json.

The job: every step each rank computes ~100 ms (its own small noise), then enters C NCCL
collectives (buckets) in turn on one stream; a bucket ends on every rank together, once the last
rank has arrived plus the transfer; the next starts when the rank's compute for it is done and the
previous bucket ended. A straggler starts its step D ms late:
  rank    one fixed rank every step (rank N // 3)
  host    the ranks of one host every step, each by a random part of D: the latest varies
  gpu     the ranks with one GPU ordinal (K - 1), on every other host, by a random part of D
  random  one random rank per step
  none    nobody: the latest rank is noise
Hosts' clocks agree (one CLOCK_REALTIME) to a few µs. The truth of a step is the rank that arrives
last at its first bucket, where every delay shows whole.
"""
import argparse
import json
import os
import random

T0 = 1_750_000_000_000_000_000  # CLOCK_REALTIME ns, an arbitrary day
CAUSES = ["cuda_call", "copy", "jit", "compile", "collective", "collective_transfer",
          "data_loading", "host_work", "unknown"]
WARMUP = 2


def delays(args, rng, n, per_host, step):
    """ms of delay per rank for this step."""
    d = [0.0] * n
    if args.scenario == "rank":
        d[n // 3] = args.delay_ms
    elif args.scenario == "host":
        host = (n // per_host) // 2
        for r in range(host * per_host, (host + 1) * per_host):
            d[r] = args.delay_ms * rng.uniform(0.3, 1.0)
    elif args.scenario == "gpu":
        for r in range(n):
            if r % per_host == per_host - 1 and (r // per_host) % 2 == 0:
                d[r] = args.delay_ms * rng.uniform(0.3, 1.0)
    elif args.scenario == "random":
        d[rng.randrange(n)] = args.delay_ms
    return d


def simulate(args):
    rng = random.Random(args.seed)
    n, k, c = args.ranks, args.per_host, args.collectives
    steps = [[] for _ in range(n)]          # per rank: (start, end)
    colls = [[] for _ in range(n)]          # per rank: (step, arrive, done)
    truth = []
    t = T0 + 5_000_000_000
    for s in range(WARMUP + args.steps):
        d = delays(args, rng, n, k, s) if s >= WARMUP else [0.0] * n
        compute = [(100.0 + rng.uniform(0, 0.2)) * 1e6 for _ in range(n)]
        prev_done = [t] * n
        first_arrive = None
        for b in range(c):
            # integers: a float of 1.75e18 ns holds 256 ns steps, more than the noise apart
            arrive = [max(t + int(d[r] * 1e6) + int(compute[r] * (b + 1) / c), prev_done[r])
                      for r in range(n)]
            if b == 0:
                first_arrive = arrive
            done = max(arrive) + 300_000  # 0.3 ms transfer
            for r in range(n):
                end = done + rng.randrange(0, 4000)  # a few µs apart on each rank
                colls[r].append((s, arrive[r], end))
                prev_done[r] = end
        end = max(prev_done) + 1_000_000  # the optimizer, 1 ms
        for r in range(n):
            steps[r].append((t, end))
        if s >= WARMUP:
            last = max(range(n), key=lambda r: first_arrive[r])
            truth.append({"step": s, "rank": last})
        t = end
    return steps, colls, truth


def summary(args, r, steps, colls):
    t0 = steps[0][0] - 1_000_000_000 - r * 1000
    durs = sorted(e - s for s, e in steps)
    return {
        "schema": "gputrace-summary", "schema_version": 1, "gputrace_version": "gen_summaries",
        "processes": [{
            "trace": "rank%d.gtrace" % r, "host": "node%03d" % (r // args.per_host),
            "pid": 1000 + r, "ppid": 1, "rank": r, "local_rank": r % args.per_host,
            "world_size": args.ranks, "gpu": {"device": r % args.per_host, "name": "synthetic"},
            "exe": "python3", "t0_ns": t0, "records_lost": 0, "damaged": False,
            "gpu_sampled": False,
            "steps": {"source": "nvtx", "warmup": WARMUP, "median_ms": durs[len(durs) // 2] / 1e6,
                      "steady": [steps[WARMUP][0] - t0, steps[-1][1] - t0],
                      "columns": ["start_ns", "end_ns"] + CAUSES,
                      "rows": [[s - t0, e - t0] + [0] * len(CAUSES) for s, e in steps]},
            "idle_ms": {k: [0.0, 0.0] for k in CAUSES},
            "collectives": {"count": len(colls), "dropped": 0,
                            "columns": ["kind", "step", "arrive_ns", "done_ns"],
                            "rows": [[0, s, a - t0, d - t0] for s, a, d in colls]},
        }]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--per-host", type=int, default=8)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--collectives", type=int, default=8)
    ap.add_argument("--scenario", default="rank",
                    choices=["rank", "host", "gpu", "random", "none"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--delay-ms", type=float, default=5.0)
    args = ap.parse_args()
    if args.ranks < 2 or args.per_host < 1 or args.steps < 1 or args.collectives < 1:
        ap.error("needs 2 ranks or more, and at least one host rank, step and collective")
    os.makedirs(args.out, exist_ok=True)
    steps, colls, truth = simulate(args)
    for r in range(args.ranks):
        with open(os.path.join(args.out, "rank%d.summary.json" % r), "w") as f:
            json.dump(summary(args, r, steps[r], colls[r]), f, separators=(",", ":"))
    n, k = args.ranks, args.per_host
    expect = {"rank": {"what": "rank", "rank": n // 3},
              "host": {"what": "host", "host": "node%03d" % ((n // k) // 2)},
              "gpu": {"what": "gpu", "gpu": k - 1},
              "random": {"what": "none"}, "none": {"what": "none"}}[args.scenario]
    with open(os.path.join(args.out, "truth.json"), "w") as f:
        json.dump({"scenario": args.scenario, "seed": args.seed, "ranks": n, "per_host": k,
                   "follows": expect, "steps": truth}, f, indent=1)


if __name__ == "__main__":
    main()
