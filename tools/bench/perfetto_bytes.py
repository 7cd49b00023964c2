#!/usr/bin/env python3
"""perfetto_bytes.py — where the bytes of a `gputrace convert` output go, and how many a
training step costs (issue 5 item 6: at most 1/10 of the PyTorch profiler's 1.96 MB per
ResNet-50 step).

usage: perfetto_bytes.py [--gputrace BIN] [--keep OUT] [--top N] TRACE.gtrace|FOLDER...
       perfetto_bytes.py --decoded OUT.perfetto-trace [--steps NAME:COUNT:WARMUP]

Converts the inputs with `gputrace convert` (advice included, as users get it), then walks the
output with its own protobuf wire decoder (no schema needed, independent of the converter):
bytes by packet kind, by TracePacket / TrackEvent field, by debug-annotation name and by
event category and name. Timestamps are resolved the way Perfetto's importer does it
(sequence-scoped incremental clocks, TracePacketDefaults, per-packet clock ids).

Bytes per step: `gputrace report --json` gives the step detection (source, count, warm-up
steps). With NVTX step ranges, "steady bytes / step" is the bytes of every timestamped packet
at or after the begin of the first steady step, divided by the number of steady steps (so
the plan-building first step and the descriptors are excluded). "total / steps" divides the
whole file by every step, first step included."""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

PYTORCH_BYTES_PER_STEP = 1.96e6


def varint(b, i):
    v = 0
    shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def fields(b, start=0, end=None):
    """(field number, wire type, value or (start, end) for LEN, field start, field end)."""
    i = start
    end = len(b) if end is None else end
    while i < end:
        f0 = i
        tag, i = varint(b, i)
        fn, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], 'little')
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], 'little')
            i += 4
        elif wt == 2:
            n, i = varint(b, i)
            v = (i, i + n)
            i += n
        else:
            raise ValueError(f'wire type {wt} at {f0}')
        yield fn, wt, v, f0, i


TP_NAMES = {8: 'timestamp', 58: 'timestamp_clock_id', 10: 'trusted_packet_sequence_id',
            11: 'track_event', 60: 'track_descriptor', 6: 'clock_snapshot',
            12: 'interned_data', 13: 'sequence_flags', 59: 'trace_packet_defaults'}
TE_NAMES = {9: 'type', 11: 'track_uuid', 23: 'name', 10: 'name_iid', 22: 'categories',
            3: 'category_iids', 4: 'debug_annotations', 47: 'flow_ids',
            48: 'terminating_flow_ids', 30: 'counter_value', 44: 'double_counter_value'}
ID_NAMES = {1: 'event_categories', 2: 'event_names', 3: 'debug_annotation_names',
            29: 'debug_annotation_string_values'}
TYPES = {1: 'BEGIN', 2: 'END', 3: 'INSTANT', 4: 'COUNTER'}


class Seq:
    def __init__(self):
        self.names, self.cats, self.anames, self.strs = {}, {}, {}, {}
        self.default_clock = 0
        self.clocks = {}  # sequence clock id -> [value ns, incremental]


def interned_entries(b, s, e):
    out = {}
    for fn, _, v, _, _ in fields(b, s, e):
        pass
    return out


def parse_interned(b, s, e, seq):
    for fn, _, v, _, _ in fields(b, s, e):
        if fn not in (1, 2, 3, 29):
            continue
        iid, text = None, b''
        for gn, _, gv, _, _ in fields(b, *v):
            if gn == 1:
                iid = gv
            elif gn == 2:
                text = bytes(b[gv[0]:gv[1]])
        table = {1: seq.cats, 2: seq.names, 3: seq.anames, 29: seq.strs}[fn]
        table[iid] = text.decode('utf-8', 'replace')


class Stats:
    def __init__(self):
        self.by_kind = collections.Counter()
        self.count_kind = collections.Counter()
        self.by_field = collections.Counter()
        self.by_arg = collections.Counter()
        self.by_cat = collections.Counter()
        self.by_name = collections.Counter()
        self.count_name = collections.Counter()
        self.total = 0
        self.packets = 0
        self.events = []  # (ts, bytes, type, name) of timestamped packets
        self.bad = []


def walk(data, st):
    seqs = collections.defaultdict(Seq)
    for fn, wt, v, f0, f1 in fields(data):
        if fn != 1 or wt != 2:
            st.bad.append(f'top-level field {fn} at {f0}')
            continue
        st.packets += 1
        size = f1 - f0
        st.total += size
        s, e = v
        pk = {}
        for gn, gwt, gv, g0, g1 in fields(data, s, e):
            pk.setdefault(gn, []).append((gv, g0, g1))
        seq = seqs[pk.get(10, [(0,)])[0][0]]
        flags = pk.get(13, [(0,)])[0][0]
        if flags & 1:
            seq.names, seq.cats, seq.anames, seq.strs = {}, {}, {}, {}
            seq.default_clock = 0
        st.by_field['packet framing'] += (s - f0)
        for gn, lst in pk.items():
            for gv, g0, g1 in lst:
                if gn == 12:
                    for hn, _, hv, h0, h1 in fields(data, *gv):
                        st.by_field['interned_data.' + ID_NAMES.get(hn, str(hn))] += h1 - h0
                    st.by_field['interned_data (framing)'] += (gv[0] - g0)
                elif gn != 11:
                    st.by_field['packet.' + TP_NAMES.get(gn, str(gn))] += g1 - g0
        if 59 in pk:
            for hn, _, hv, _, _ in fields(data, *pk[59][0][0]):
                if hn == 58:
                    seq.default_clock = hv
        if 12 in pk:
            parse_interned(data, *pk[12][0][0], seq)
        if 6 in pk:
            for hn, _, hv, _, _ in fields(data, *pk[6][0][0]):
                if hn != 1:
                    continue
                c = {}
                for kn, _, kv, _, _ in fields(data, *hv):
                    c[kn] = kv
                cid = c.get(1, 0)
                if 64 <= cid < 128:
                    seq.clocks[cid] = [c.get(2, 0) * (c.get(4) or 1), bool(c.get(3, 0)),
                                       c.get(4) or 1]
        ts = None
        if 8 in pk:
            raw = pk[8][0][0]
            cid = pk[58][0][0] if 58 in pk else seq.default_clock
            if 64 <= cid < 128:
                clk = seq.clocks.get(cid)
                if clk is None:
                    st.bad.append(f'packet at {f0}: clock {cid} before its snapshot')
                else:
                    if raw >= 1 << 63:
                        raw -= 1 << 64
                    if clk[1]:
                        clk[0] += raw * clk[2]
                        ts = clk[0]
                    else:
                        ts = raw * clk[2]
            else:
                ts = raw  # BOOTTIME or the trace clock: the converter writes no other
        kind = 'other'
        if 60 in pk:
            kind = 'track_descriptor'
        elif 6 in pk:
            kind = 'clock_snapshot'
        elif 11 in pk:
            kind = walk_event(data, pk[11][0], seq, st, size, ts)
        elif 59 in pk:
            kind = 'trace_packet_defaults'
        st.by_kind[kind] += size
        st.count_kind[kind] += 1
    return st


def walk_event(data, ev, seq, st, size, ts):
    (s, e), g0, _ = ev
    st.by_field['track_event (framing)'] += s - g0
    typ, name, cat = 0, None, None
    for hn, _, hv, h0, h1 in fields(data, s, e):
        label = TE_NAMES.get(hn, str(hn))
        st.by_field['track_event.' + label] += h1 - h0
        if hn == 9:
            typ = hv
        elif hn == 10:
            name = seq.names.get(hv, f'iid {hv}')
        elif hn == 23:
            name = bytes(data[hv[0]:hv[1]]).decode('utf-8', 'replace')
        elif hn == 3:
            cat = seq.cats.get(hv, f'iid {hv}')
        elif hn == 22:
            cat = bytes(data[hv[0]:hv[1]]).decode('utf-8', 'replace')
        elif hn == 4:
            aname = '?'
            for an, _, av, _, _ in fields(data, *hv):
                if an == 1:
                    aname = seq.anames.get(av, f'iid {av}')
                elif an == 10:
                    aname = bytes(data[av[0]:av[1]]).decode('utf-8', 'replace')
            st.by_arg[aname] += h1 - h0
    t = TYPES.get(typ, str(typ))
    if typ in (1, 3):
        key = f'{cat or "-"}'
        st.by_cat[key] += size
        short = (name or '-')[:60]
        st.by_name[short] += size
        st.count_name[short] += 1
    if ts is not None:
        st.events.append((ts, size, typ, name))
    return 'track_event ' + t


def report_steps(report_bin, inputs):
    """(step name or None, count, warm-up) from `gputrace report --json` of the first input."""
    try:
        out = subprocess.run([report_bin, 'report', '--json'] + inputs[:1], capture_output=True,
                             check=False).stdout
        d = json.loads(out)
    except (OSError, ValueError):
        return None, 0, 0
    procs = d.get('processes', [d]) if isinstance(d, dict) else []
    steps = procs[0].get('steps', {}) if procs else {}
    m = re.match(r"NVTX range '(.*)'", steps.get('source') or '')
    return (m.group(1) if m else None), steps.get('count', 0), steps.get('warmup_steps', 0)


def per_step(st, name, count, warmup):
    """Steady bytes per step, or None without NVTX step ranges."""
    if not name or count <= warmup:
        return None, None
    begins = sorted(ts for ts, _, typ, n in st.events if typ == 1 and n == name)
    if len(begins) < count:
        return None, None
    start = begins[warmup]
    steady = sum(size for ts, size, _, _ in st.events if ts >= start)
    return steady / (count - warmup), start


def table(title, counter, total, top, counts=None):
    print(f'\n{title}')
    for k, v in counter.most_common(top):
        extra = f'  x{counts[k]}' if counts else ''
        print(f'  {v:>11,} B {100.0 * v / total:5.1f}%  {k}{extra}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('inputs', nargs='+')
    ap.add_argument('--gputrace', default=None, help='gputrace binary (default: build*/bin)')
    ap.add_argument('--keep', help='write the converted trace here')
    ap.add_argument('--decoded', action='store_true', help='inputs are already converted')
    ap.add_argument('--steps', help='NAME:COUNT:WARMUP instead of asking gputrace report')
    ap.add_argument('--top', type=int, default=15)
    ap.add_argument('--json', help='also write the numbers as JSON here')
    a = ap.parse_args()
    gt = a.gputrace
    if not gt:
        here = os.path.dirname(os.path.abspath(__file__))
        for cand in ('build-bytes', 'build'):
            p = os.path.join(here, '..', '..', cand, 'bin', 'gputrace')
            if os.path.exists(p):
                gt = p
                break
    if a.decoded:
        out = a.inputs[0]
    else:
        out = a.keep or tempfile.mktemp(suffix='.perfetto-trace')
        r = subprocess.run([gt, 'convert', '-q', '-o', out] + a.inputs)
        if r.returncode not in (0, 1):
            print(f'perfetto_bytes: gputrace convert failed ({r.returncode})')
            return 2
    with open(out, 'rb') as f:
        data = memoryview(f.read())
    if not a.decoded and not a.keep:
        os.unlink(out)
    st = walk(data, Stats())
    if a.steps:
        n, c, w = a.steps.split(':')
        name, count, warmup = n, int(c), int(w)
    elif gt and not a.decoded:
        name, count, warmup = report_steps(gt, a.inputs)
    else:
        name, count, warmup = None, 0, 0
    steady, _ = per_step(st, name, count, warmup)
    print(f'{", ".join(a.inputs)}: {st.total:,} bytes, {st.packets:,} packets')
    res = {'bytes': st.total, 'packets': st.packets, 'steps': count, 'warmup_steps': warmup}
    if count:
        res['total_per_step'] = st.total / count
        print(f'steps: {count} ({warmup} warm-up) from NVTX range {name!r}' if name else
              f'steps: {count} ({warmup} warm-up)')
        print(f'total / steps:         {st.total / count / 1e3:9.1f} KB')
    if steady is not None:
        res['steady_per_step'] = steady
        print(f'steady bytes / step:   {steady / 1e3:9.1f} KB  '
              f'(PyTorch profiler / this = {PYTORCH_BYTES_PER_STEP / steady:.1f}x; goal >= 10x)')
    table('by packet kind', st.by_kind, st.total, a.top, st.count_kind)
    table('by field (nested fields counted inside track_event.* / interned_data.*)',
          st.by_field, st.total, 40)
    table('debug annotations by name', st.by_arg, st.total, a.top)
    table('BEGIN/INSTANT packets by category (END packets not included)', st.by_cat, st.total,
          a.top)
    table('BEGIN/INSTANT packets by name', st.by_name, st.total, a.top, st.count_name)
    for b in st.bad[:10]:
        print('DECODE PROBLEM:', b)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(res, f)
    return 1 if st.bad else 0


if __name__ == '__main__':
    sys.exit(main())
