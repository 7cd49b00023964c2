#!/usr/bin/env python3
"""Checks the anchors of GPUTRACE_CUPTI_LINK=order (the default) on a cupti_dump listing: each
outermost cuDNN or cuBLAS call wrote the correlation ids of two anchor calls (extcorr kind=101 begin, 102 end); the
kernels the library launched should carry ids strictly between them, because CUPTI numbers all API
calls from one counter. Where a callback pair (kind=5) also names a kernel's call
(GPUTRACE_CUPTI_CALLBACKS=1, the reference), the two must agree.

    anchor_check.py DUMP [--min-agree N] [--max-disagree N]
Prints one summary line; exits 1 when the bounds are not met.
"""
import argparse
import bisect
import sys


def fields(line):
    return dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("--min-agree", type=int, default=0)
    ap.add_argument("--max-disagree", type=int, default=0)
    a = ap.parse_args()
    begin, end, pair, kernels = {}, {}, {}, []
    for line in open(a.dump):
        if line.startswith("extcorr "):
            f = fields(line)
            kind, ext, corr = int(f["kind"]), int(f["ext"]), int(f["corr"])
            if kind == 101:
                begin[ext] = corr
            elif kind == 102:
                end[ext] = corr
            elif kind == 5:
                pair[corr] = ext
        elif line.startswith("kernel "):
            kernels.append(int(fields(line)["corr"]))
    ranges = sorted((begin[c], end[c], c) for c in begin if c in end and end[c] > begin[c])
    starts = [r[0] for r in ranges]
    # ranges of different threads may overlap: scan back while a range can still contain the id
    longest = max((r[1] - r[0] for r in ranges), default=0)
    stats = dict(kernels=len(kernels), anchored_calls=len(ranges), in_one=0, in_several=0,
                 outside=0, agree=0, disagree=0, pair_outside=0)
    for corr in kernels:
        i = bisect.bisect_left(starts, corr) - 1
        hits = []
        while i >= 0 and corr - ranges[i][0] <= longest:
            if ranges[i][0] < corr < ranges[i][1]:
                hits.append(ranges[i][2])
            i -= 1
        if not hits:
            stats["outside"] += 1
            if pair.get(corr) in begin:
                stats["pair_outside"] += 1  # paired to an anchored call, yet outside its range
            continue
        stats["in_one" if len(hits) == 1 else "in_several"] += 1
        if corr in pair and len(hits) == 1:
            stats["agree" if pair[corr] == hits[0] else "disagree"] += 1
    print(", ".join(f"{k} {v}" for k, v in stats.items()))
    bad = stats["agree"] < a.min_agree or stats["disagree"] + stats["pair_outside"] > a.max_disagree
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
