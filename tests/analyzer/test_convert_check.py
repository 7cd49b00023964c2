#!/usr/bin/env python3
"""test_convert_check.py — decode a `gputrace convert` output with protoc against
analyzer/convert/perfetto_trimmed.proto and check what Perfetto's importer relies on but does not
always report: sequence ids and flags, interning order, tracks described before use (counter
tracks especially), strict nesting per track (simulated the way the importer pairs BEGIN/END:
sorted by timestamp, file order at equal timestamps), flows: every id that terminates was
started and every id that starts terminates (one arrow, both ends).

usage: test_convert_check.py PROTO TRACE [--expect basic|ranks|truncated|any] [--json]
                             [--call-site 'SLICE NAME=CALL SITE']...
--call-site: some slice named SLICE NAME carries that call_site argument (repeatable).
Exit 0 when valid (and the expectations hold), 1 with the reasons otherwise."""
import json
import re
import subprocess
import sys
from collections import defaultdict

FAILS = []


def fail(msg):
    FAILS.append(msg)


def unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == '\\':
            n = s[i + 1]
            if n in '01234567':
                j = i + 1
                while j < len(s) and j < i + 4 and s[j] in '01234567':
                    j += 1
                out.append(int(s[i + 1:j], 8))
                i = j
                continue
            out += {'n': b'\n', 't': b'\t', 'r': b'\r', '"': b'"', "'": b"'",
                    '\\': b'\\'}.get(n, n.encode())
            i += 2
            continue
        out += c.encode()
        i += 1
    return out.decode('utf-8', 'replace')


def parse_text(text):
    """protoc text format -> nested dicts of lists."""
    root = defaultdict(list)
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == '}':
            stack.pop()
            continue
        if line.endswith('{'):
            node = defaultdict(list)
            stack[-1][line[:-1].strip()].append(node)
            stack.append(node)
            continue
        key, _, val = line.partition(': ')
        if val.startswith('"'):
            val = unescape(val[1:-1])
        elif re.fullmatch(r'-?\d+', val):
            val = int(val)
        elif re.fullmatch(r'-?[\d.e+-]+|inf|-inf|nan', val):
            val = float(val)
        stack[-1][key].append(val)
    return root


def one(node, key, default=None):
    v = node.get(key)
    return v[0] if v else default


class SeqClock:
    """What Perfetto's importer keeps per sequence to read timestamps: the default clock
    (TracePacketDefaults, dropped by SEQ_INCREMENTAL_STATE_CLEARED) and sequence-scoped clocks
    64..127 from ClockSnapshots (an incremental one adds each packet's value, in file order)."""

    def __init__(self):
        self.default = 0
        self.track = None  # TrackEventDefaults.track_uuid
        self.clocks = {}  # id -> [value, incremental]


def resolve_ts(idx, p, sc):
    """The packet's absolute BOOTTIME timestamp (None without one)."""
    for d in p.get('trace_packet_defaults', []):
        sc.default = one(d, 'timestamp_clock_id', 0)
        sc.track = one(one(d, 'track_event_defaults', {}), 'track_uuid')
    for cs in p.get('clock_snapshot', []):
        for c in cs.get('clocks', []):
            cid = one(c, 'clock_id', 0)
            if 64 <= cid < 128:
                if one(c, 'unit_multiplier_ns', 1) != 1:
                    fail(f'packet {idx}: clock {cid} not in ns')
                inc = one(c, 'is_incremental', 'false') in (True, 'true', 1)
                sc.clocks[cid] = [one(c, 'timestamp', 0), inc]
        return None  # the importer reads no timestamp of a snapshot packet
    raw = one(p, 'timestamp')
    if raw is None:
        return None
    cid = one(p, 'timestamp_clock_id', sc.default)
    if 64 <= cid < 128:
        clk = sc.clocks.get(cid)
        if clk is None:
            fail(f'packet {idx}: timestamp on clock {cid} before a snapshot declares it')
            return None
        if not clk[1]:
            return raw
        if raw >= 2**63:
            raw -= 2**64
        clk[0] += raw
        return clk[0]
    if cid not in (0, 6):
        fail(f'packet {idx}: timestamp on clock {cid} (the converter writes BOOTTIME only)')
    return raw


def check(packets):
    seq_started = {}
    seq_clock = defaultdict(SeqClock)
    # seq -> (names, cats, debug annotation names, debug annotation string values)
    interned = defaultdict(lambda: ({}, {}, {}, {}))
    tracks = {}  # uuid -> descriptor
    events = []  # (index, packet, track_event, name, cats)
    for idx, p in enumerate(packets):
        seq = one(p, 'trusted_packet_sequence_id', 0)
        if not seq:
            fail(f'packet {idx}: no trusted_packet_sequence_id')
            continue
        flags = one(p, 'sequence_flags', 0)
        if seq not in seq_started:
            seq_started[seq] = True
            if not flags & 1:
                fail(f'packet {idx}: first packet of sequence {seq} lacks SEQ_INCREMENTAL_STATE_CLEARED')
        elif flags & 1:
            interned.pop(seq, None)
        if flags & 1:
            seq_clock[seq].default, seq_clock[seq].track = 0, None
        ts = resolve_ts(idx, p, seq_clock[seq])
        if ts is not None and not (0 < ts < 2**63):
            fail(f'packet {idx}: timestamp {ts} out of range')
        for idata in p.get('interned_data', []):
            for en in idata.get('event_names', []):
                names = interned[seq][0]
                iid = one(en, 'iid')
                if iid in names and names[iid] != one(en, 'name'):
                    fail(f'packet {idx}: iid {iid} redefined')
                names[iid] = one(en, 'name')
            for ec in idata.get('event_categories', []):
                interned[seq][1][one(ec, 'iid')] = one(ec, 'name')
            for dn in idata.get('debug_annotation_names', []):
                anames = interned[seq][2]
                iid = one(dn, 'iid')
                if not iid:
                    fail(f'packet {idx}: debug annotation name without iid')
                if iid in anames and anames[iid] != one(dn, 'name'):
                    fail(f'packet {idx}: debug annotation name iid {iid} redefined')
                anames[iid] = one(dn, 'name')
            for sv in idata.get('debug_annotation_string_values', []):
                strs = interned[seq][3]
                iid = one(sv, 'iid')
                if not iid:
                    fail(f'packet {idx}: interned string value without iid')
                if iid in strs and strs[iid] != one(sv, 'str'):
                    fail(f'packet {idx}: string value iid {iid} redefined')
                strs[iid] = one(sv, 'str')
        for td in p.get('track_descriptor', []):
            uuid = one(td, 'uuid')
            if not uuid:
                fail(f'packet {idx}: track descriptor without uuid')
                continue
            if 'thread' in td:
                th = td['thread'][0]
                if one(th, 'pid') is None or one(th, 'tid') is None:
                    fail(f'packet {idx}: thread descriptor without pid/tid')
            if 'process' in td and one(td['process'][0], 'pid') is None:
                fail(f'packet {idx}: process descriptor without pid')
            parent = one(td, 'parent_uuid')
            if parent and parent not in tracks:
                fail(f'packet {idx}: track {uuid} has undescribed parent {parent}')
            tracks[uuid] = td
        for te in p.get('track_event', []):
            if ts is None:
                fail(f'packet {idx}: track event without timestamp')
                continue
            uuid = one(te, 'track_uuid', seq_clock[seq].track)
            if uuid not in tracks:
                fail(f'packet {idx}: track {uuid} used before it is described')
            name = one(te, 'name')
            niid = one(te, 'name_iid')
            if niid is not None:
                name = interned[seq][0].get(niid)
                if name is None:
                    fail(f'packet {idx}: name_iid {niid} not interned on sequence {seq}')
                if not flags & 2:
                    fail(f'packet {idx}: uses interning without SEQ_NEEDS_INCREMENTAL_STATE')
            for da in te.get('debug_annotations', []):
                aiid = one(da, 'name_iid')
                if aiid is None:
                    if one(da, 'name') is None:
                        fail(f'packet {idx}: debug annotation without a name')
                    continue
                aname = interned[seq][2].get(aiid)
                if aname is None:
                    fail(f'packet {idx}: debug annotation name_iid {aiid} not interned on sequence {seq}')
                if not flags & 2:
                    fail(f'packet {idx}: uses interning without SEQ_NEEDS_INCREMENTAL_STATE')
                da['name'] = [aname]  # resolved, so the checks below read names either way
            for da in te.get('debug_annotations', []):
                siid = one(da, 'string_value_iid')
                if siid is None:
                    continue
                sval = interned[seq][3].get(siid)
                if sval is None:
                    fail(f'packet {idx}: string value iid {siid} not interned on sequence {seq}')
                if not flags & 2:
                    fail(f'packet {idx}: uses interning without SEQ_NEEDS_INCREMENTAL_STATE')
                da['string_value'] = [sval]  # resolved like the names
            cats = list(te.get('categories', []))
            for ciid in te.get('category_iids', []):
                c = interned[seq][1].get(ciid)
                if c is None:
                    fail(f'packet {idx}: category iid {ciid} not interned on sequence {seq}')
                cats.append(c)
            typ = one(te, 'type')
            if typ == 'TYPE_COUNTER':
                td = tracks.get(uuid)
                if td is None or 'counter' not in td:
                    fail(f'packet {idx}: counter value on a non-counter track {uuid}')
                if one(te, 'counter_value') is None and one(te, 'double_counter_value') is None:
                    fail(f'packet {idx}: counter without value')
            events.append((idx, ts, te, name, cats, uuid, typ))
    return tracks, events


def check_nesting(events):
    """Pair BEGIN/END per track like the importer and check the pairs are the intended ones:
    the converter writes a slice's END right after its BEGIN (except NVTX ranges)."""
    by_track = defaultdict(list)
    for ev in events:
        if ev[6] in ('TYPE_SLICE_BEGIN', 'TYPE_SLICE_END', 'TYPE_INSTANT'):
            by_track[ev[5]].append(ev)
    slices = []
    for uuid, evs in by_track.items():
        file_next = {}
        for a, b in zip(evs, evs[1:]):
            if a[6] == 'TYPE_SLICE_BEGIN' and b[6] == 'TYPE_SLICE_END':
                file_next[a[0]] = b[0]
        stack = []
        for ev in sorted(evs, key=lambda e: (e[1], e[0])):
            if ev[6] == 'TYPE_SLICE_BEGIN':
                stack.append(ev)
            elif ev[6] == 'TYPE_SLICE_END':
                if not stack:
                    fail(f'track {uuid}: END at packet {ev[0]} with nothing open')
                    continue
                b = stack.pop()
                want = file_next.get(b[0])
                if want is not None and want != ev[0]:
                    fail(f'track {uuid}: slice "{b[3]}" (packet {b[0]}) would be closed by the END '
                         f'of packet {ev[0]} instead of {want}: overlapping slices')
                slices.append((uuid, b[1], ev[1], b[3], b[4], b[2], ev[2]))
        for b in stack:
            fail(f'track {uuid}: slice "{b[3]}" at packet {b[0]} never ends')
    return slices


def check_flows(events):
    """Perfetto's importer (v2 flows) starts or continues a flow at an id in flow_ids and ends it
    at an id in terminating_flow_ids; an end whose id never started is dropped silently, and a
    start nothing ends draws nothing. Every arrow the converter writes must have both ends."""
    starts, terms = {}, {}
    for ev in events:
        te, ts = ev[2], ev[1]
        for f in te.get('flow_ids', []):
            if f in starts:
                fail(f'flow {f} started twice')
            starts[f] = ts
        for f in te.get('terminating_flow_ids', []):
            if f in terms:
                fail(f'flow {f} terminated twice')
            terms.setdefault(f, ts)
    linked = 0
    unstarted = [f for f in terms if f not in starts]
    unended = [f for f in starts if f not in terms]
    for f, ts in terms.items():
        if f in starts:
            if starts[f] > ts:
                fail(f'flow {f} terminates (ts {ts}) before it starts (ts {starts[f]})')
            linked += 1
    if unstarted:
        fail(f'{len(unstarted)} flows terminate but never start (e.g. {unstarted[:3]})')
    if unended:
        fail(f'{len(unended)} flows start but never terminate (e.g. {unended[:3]})')
    return linked


def expect(cond, msg):
    if not cond:
        fail('expected: ' + msg)


def args_of(slice_):
    return {one(a, 'name'): a for a in slice_[5].get('debug_annotations', [])}


def check_call_sites(slices):
    """Every call_site comes with its stack, and a Python call site is one of the stack's lines
    (unless the stack was cut before reaching it). Returns {(slice name, call site): count}."""
    seen = defaultdict(int)
    for s in slices:
        a = args_of(s)
        site = one(a.get('call_site', {}), 'string_value')
        stack = one(a.get('stack', {}), 'string_value')
        if site is None:
            continue
        seen[(s[3], site)] += 1
        if not stack:
            fail(f'slice {s[3]}: call_site {site!r} without a stack')
            continue
        lines = stack.split('\n')
        if len(lines) > 25 or len(stack) > 2048:
            fail(f'slice {s[3]}: stack of {len(lines)} lines, {len(stack)} bytes')
        if '.py:' in site and site not in lines and lines[-1] != '...':
            fail(f'slice {s[3]}: call site {site!r} is not a line of its stack')
    return seen


def check_um(tracks, events, slices):
    """um.gtrace: a unified-memory track per GPU with its faults and migrations (args that say
    what, how much and why), the CPU's faults on a track of the process."""
    names = {k: t['name'][0] for k, t in tracks.items() if 'name' in t}
    for dev in (0, 1):
        expect(f'GPU {dev} \u00b7 unified memory' in names.values(),
               f'a track "GPU {dev} \u00b7 unified memory"')
    expect('GPU 0 \u00b7 unified memory (overlap 1)' in names.values(),
           'the migration overlapping its fault on an overlap lane')
    by_track = defaultdict(list)
    for s_ in slices:
        by_track[names.get(s_[0], '?')].append(s_)
    um0 = [s_[3] for s_ in by_track['GPU 0 \u00b7 unified memory'] +
           by_track['GPU 0 \u00b7 unified memory (overlap 1)']]
    expect(um0.count('GPU page fault') == 1 and um0.count('HtoD migration') == 2 and
           um0.count('DtoH migration') == 1, f'GPU 0\'s faults and migrations (got {um0})')
    mig = [s_ for s_ in slices if s_[3] == 'HtoD migration']
    reasons = sorted(one(args_of(s_).get('reason', {}), 'string_value') for s_ in mig)
    expect(reasons == ['page fault', 'page fault', 'prefetch (the program\'s)'],
           f'migration reasons {reasons}')
    expect(all(one(args_of(s_).get('bytes', {}), 'uint_value') == 8 << 20 for s_ in mig),
           'migration bytes')
    flt = [s_ for s_ in slices if s_[3] == 'GPU page fault']
    expect(len(flt) == 2 and all(s_[2] - s_[1] == 50000 for s_ in flt) and
           all(one(args_of(s_).get('detail', {}), 'string_value') == 'read' for s_ in flt),
           'GPU faults: 50 us of service each, read accesses')
    expect('throttling' in [s_[3] for s_ in by_track['GPU 1 \u00b7 unified memory']],
           'throttling on GPU 1')
    inst = [(names.get(e[5], '?'), e[3]) for e in events if e[6] == 'TYPE_INSTANT']
    expect(inst.count(('unified memory \u00b7 CPU', 'CPU page fault')) == 2,
           f'two CPU faults on the process\'s CPU track (got {inst})')
    expect(('GPU 1 \u00b7 unified memory', 'thrashing') in inst, 'thrashing on GPU 1')


def check_basic(tracks, events, slices, linked):
    names = [t['name'][0] for t in tracks.values() if 'name' in t]
    procs = [t['process'][0] for t in tracks.values() if 'process' in t]
    threads = [t['thread'][0] for t in tracks.values() if 'thread' in t]
    expect(any(one(p, 'pid') == 4242 and one(p, 'process_name') == 'python3' for p in procs),
           'process 4242 named python3')
    expect({one(t, 'thread_name') for t in threads} >= {'python', 'worker'}, 'threads named')
    expect('GPU 0 \u00b7 stream 7' in names, 'a track "GPU 0 · stream 7"')
    expect(any(n.startswith('GPU 0 \u00b7 stream 7 (overlap') for n in names), 'an overlap lane')
    snames = [s[3] for s in slices]
    expect('vecAdd(float*, float*, float*, int)' in snames, 'demangled kernel name')
    expect('Memcpy HtoD (pageable)' in snames, 'pageable copy on the GPU track')
    stall = [s for s in slices if s[3] == 'cudaStreamSynchronize (stall)']
    expect(stall and 'sync' in stall[0][4], 'a sync stall slice in category sync')
    waited = [e for e in events if e[6] == 'TYPE_INSTANT' and e[3] == 'waited for' and
              e[2].get('terminating_flow_ids')]
    expect(stall and waited and stall[0][1] <= waited[0][1] <= stall[0][2],
           'the stall ends a flow (at a "waited for" instant inside it)')
    sargs = args_of(stall[0]) if stall else {}
    expect(one(sargs.get('call_site', {}), 'string_value') == 'train.py:57 in main',
           'the stall names its call site train.py:57 (the user frame, not torch\'s item)')
    expect(one(sargs.get('stack', {}), 'string_value') ==
           '[libtorch_cuda.so+0x1234]\n_tensor.py:10 in item\ntrain.py:57 in main',
           'the stall carries its whole stack, innermost first')
    sited = {s[3] for s in slices if 'call_site' in args_of(s)}
    expect(sited == {'cudaStreamSynchronize (stall)'},
           f'only the slice with a known stack has a call site (got {sorted(sited)})')
    expect('train_step' in snames, 'the NVTX range')
    dn = [s for s in slices if s[3] == 'cudnnBackendExecute']
    args = {one(a, 'name'): a for a in dn[0][5].get('debug_annotations', [])} if dn else {}
    expect(one(args.get('engine', {}), 'int_value') == 38, 'cuDNN engine 38 on the execute')
    expect(one(args.get('cudnn_op', {}), 'string_value') == 'conv_fwd', 'cuDNN op conv_fwd')
    expect(one(args.get('notes', {}), 'string_value') == 'tensor_core', 'cuDNN notes')
    cp = [s for s in slices if s[3] == 'cudaMemcpyAsync']
    cargs = {one(a, 'name'): a for a in cp[0][5].get('debug_annotations', [])} if cp else {}
    expect(one(cargs.get('src_memory', {}), 'string_value') == 'pageable', 'src memory pageable')
    expect('dst_memory' not in cargs, 'no dst_memory on an HtoD copy to device memory')
    gcp = [s for s in slices if s[3] == 'Memcpy HtoD (pageable)']
    gargs = args_of(gcp[0]) if gcp else {}
    expect(gcp and 'src_memory' not in gargs and 'dst_memory' not in gargs and
           one(gargs.get('bytes', {}), 'uint_value') == 4096,
           'the GPU copy names its memory kinds in its name only')
    kern = [args_of(s) for s in slices if s[3] == 'vecAdd(float*, float*, float*, int)']
    configs = {one(a.get('config', {}), 'string_value') for a in kern}
    expect(configs == {'grid 128x1x1, block 256x1x1, 32 registers, 0 B shared memory'},
           f'kernel launch configuration (got {configs})')
    ln = [args_of(s) for s in slices if s[3] == 'cudaLaunchKernel']
    expect(ln and one(ln[0].get('config', {}), 'string_value') == 'grid 128x1x1, block 256x1x1',
           'launch configuration on the launch call')
    expect(one(cargs.get('bytes', {}), 'uint_value') == 4096, 'copy bytes')
    # Flows: copy, launch, cuDNN (4 kernels: one direct, three anchored), nested launch, sync,
    # and a kernel written before its pair and launch (linked late).
    expect(linked == 9, f'9 linked flows (got {linked})')
    counters = defaultdict(list)
    for ev in events:
        if ev[6] == 'TYPE_COUNTER':
            counters[tracks[ev[5]]['name'][0]].append(
                one(ev[2], 'counter_value', one(ev[2], 'double_counter_value')))
    expect(counters.get('GPU 0 memory allocated') == [1 << 20, 0], 'device memory counter')
    expect(counters.get('pinned host memory') == [2 << 20], 'pinned memory counter')
    busy = counters.get('GPU 0 busy %', [])
    expect(busy and 0 < max(busy) <= 100 and busy[-1] == 0, 'busy % counter')
    inst = [e[3] for e in events if e[6] == 'TYPE_INSTANT']
    expect('records lost' in inst, 'records lost instant')
    # the nested launch sits inside the cuDNN slice
    nested = [s for s in slices if s[3] == 'cudaLaunchKernel' and dn and
              dn[0][1] <= s[1] and s[2] <= dn[0][2]]
    expect(nested, 'launch nested inside cudnnBackendExecute')


def check_bookkeeping(tracks, slices):
    """The cuDNN descriptor calls of test_convert_gen's thread 4244 (times in ns from its NVTX
    range): two runs folded, everything else a slice of its own, all nested in the range."""
    tid_of = {u: one(t['thread'][0], 'tid') for u, t in tracks.items() if 'thread' in t}
    mine = sorted((s for s in slices if tid_of.get(s[0]) == 4244), key=lambda s: (s[1], -s[2]))
    rng = [s for s in mine if s[3] == 'bookkeeping_range']
    expect(len(rng) == 1, 'the NVTX range of the bookkeeping thread')
    if not rng:
        return
    t0 = rng[0][1] - 100000
    got = [(s[3], s[1] - t0, s[2] - t0) for s in mine if s is not rng[0]]
    fold = 'cuDNN descriptor bookkeeping'
    des, fin = 'cudnnBackendDestroyDescriptor', 'cudnnBackendFinalize'
    want = [(fold, 100100, 101000), (des, 101100, 101300), (fold, 101400, 101800),
            (fin, 102000, 122000), (des, 122100, 122200), (des, 140000, 140100),
            (des, 160000, 160100), (fin, 170000, 170200), (des, 170300, 170400),
            (des, 185000, 185100), ('cudaGetDeviceProperties', 185150, 186000),
            (des, 185200, 185300)]
    expect(got == want, f'bookkeeping slices {want} (got {got})')
    for s in mine:
        if s is not rng[0] and not (rng[0][1] <= s[1] and s[2] <= rng[0][2]):
            fail(f'{s[3]} at {s[1] - t0} is not inside its NVTX range')
    folded = [args_of(s) for s in mine if s[3] == fold]
    counts = [(one(a.get('count', {}), 'uint_value'), one(a.get('busy_ns', {}), 'uint_value'),
               one(a.get('calls', {}), 'string_value')) for a in folded]
    expect(counts == [(3, 700, '2 cudnnBackendDestroyDescriptor, 1 cudnnBackendFinalize'),
                      (2, 300, '1 cudnnBackendDestroyDescriptor, 1 cudnnBackendFinalize')],
           f'count, busy_ns and calls of the folded runs (got {counts})')
    failed = [args_of(s) for s in mine if s[3] == des and s[1] - t0 == 101100]
    expect(failed and one(failed[0].get('result', {}), 'int_value') == 3,
           'the failed call keeps its result')


def check_ranks(tracks, slices, linked):
    procs = [t['process'][0] for t in tracks.values() if 'process' in t]
    pnames = sorted(one(p, 'process_name') for p in procs)
    expect(pnames == ['python3 (rank 0 on testhost)', 'python3 (rank 1 on testhost)'],
           f'two rank processes (got {pnames})')
    expect(len({one(p, 'pid') for p in procs}) == 2, 'distinct pids after the merge')
    gpu = [s for s in slices if s[3].startswith('ncclDevKernel')]
    expect(len(gpu) == 6, 'six NCCL kernels')
    expect(linked == 6, f'six launch flows (got {linked})')


def check_json(path):
    with open(path) as f:
        doc = json.load(f)
    evs = doc.get('traceEvents', [])
    expect(any(e.get('ph') == 'X' or e.get('ph') == 'B' for e in evs), 'JSON slices')
    expect(any(e.get('ph') == 'C' for e in evs), 'JSON counters')
    expect(any(e.get('ph') == 's' for e in evs) and any(e.get('ph') == 'f' for e in evs),
           'JSON flows')
    depth = defaultdict(int)
    for e in evs:  # file order: every E closes a B of its thread
        if e.get('ph') in ('B', 'E'):
            depth[(e['pid'], e['tid'])] += 1 if e['ph'] == 'B' else -1
    expect(all(v == 0 for v in depth.values()), 'balanced B/E per thread')
    print(f'{path}: {len(evs)} JSON events')


def arg_value(a):
    for k in ('string_value', 'int_value', 'uint_value', 'double_value', 'bool_value'):
        if k in a:
            v = a[k][0]
            return f'{v:.6g}' if isinstance(v, float) else v
    if 'pointer_value' in a:
        return hex(a['pointer_value'][0])
    return None


def compare_json(events, path):
    """The same events as the JSON sink wrote for the same input: timestamps (ns, through the
    incremental clock) of every BEGIN/END/INSTANT/COUNTER, and the names and arguments (string
    values through their iids) of every BEGIN and INSTANT."""
    with open(path) as f:
        evs = json.load(f)['traceEvents']
    kinds = {'B': 'TYPE_SLICE_BEGIN', 'E': 'TYPE_SLICE_END', 'i': 'TYPE_INSTANT',
             'I': 'TYPE_INSTANT', 'C': 'TYPE_COUNTER'}
    want, got = defaultdict(int), defaultdict(int)
    for e in evs:
        typ = kinds.get(e.get('ph'))
        if not typ:
            continue
        sec, _, frac = str(e['ts']).partition('.')
        ts = int(sec) * 1000 + int((frac + '000')[:3])
        key = (typ, ts)
        if typ in ('TYPE_SLICE_BEGIN', 'TYPE_INSTANT'):
            args = {k: (f'{v:.6g}' if isinstance(v, float) else v)  # JSON writes %g
                    for k, v in (e.get('args') or {}).items()}
            key += (e.get('name'), tuple(sorted((k, str(v)) for k, v in args.items())))
        want[key] += 1
    for ev in events:
        typ, ts, te = ev[6], ev[1], ev[2]
        if typ not in kinds.values():
            continue
        key = (typ, ts)
        if typ in ('TYPE_SLICE_BEGIN', 'TYPE_INSTANT'):
            args = {one(a, 'name'): arg_value(a) for a in te.get('debug_annotations', [])}
            key += (ev[3], tuple(sorted((k, str(v)) for k, v in args.items())))
        got[key] += 1
    missing = [k for k in want if got.get(k, 0) < want[k]]
    extra = [k for k in got if want.get(k, 0) < got[k]]
    for k in missing[:5]:
        fail(f'in the JSON output but not in the Perfetto one: {k}')
    for k in extra[:5]:
        fail(f'in the Perfetto output but not in the JSON one: {k}')
    print(f'{path}: {sum(want.values())} JSON events, all matched' if not missing and not extra
          else f'{path}: {len(missing)} JSON events unmatched, {len(extra)} extra')


def main():
    args = sys.argv[1:]
    want = 'any'
    if '--expect' in args:
        i = args.index('--expect')
        want = args[i + 1]
        del args[i:i + 2]
    want_sites = []
    json_ref = None
    if '--compare-json' in args:
        i = args.index('--compare-json')
        json_ref = args[i + 1]
        del args[i:i + 2]
    while '--call-site' in args:
        i = args.index('--call-site')
        want_sites.append(tuple(args[i + 1].split('=', 1)))
        del args[i:i + 2]
    if '--json' in args:
        args.remove('--json')
        check_json(args[0])
    else:
        proto, trace = args[0], args[1]
        import os
        with open(trace, 'rb') as f:
            res = subprocess.run(['protoc', '--decode=perfetto.protos.Trace',
                                  '--proto_path=' + os.path.dirname(os.path.abspath(proto)),
                                  os.path.abspath(proto)],
                                 stdin=f, capture_output=True)
        if res.returncode != 0:
            print('protoc could not decode the trace:', res.stderr.decode()[:500])
            return 1
        root = parse_text(res.stdout.decode('utf-8', 'replace'))
        packets = root.get('packet', [])
        if not packets:
            fail('no packets')
        tracks, events = check(packets)
        slices = check_nesting(events)
        linked = check_flows(events)
        sites = check_call_sites(slices)
        if json_ref:
            compare_json(events, json_ref)
        for name, site in want_sites:
            expect(sites.get((name, site)), f'a slice {name!r} with call_site {site!r} (got '
                   f'{sorted(k for k in sites if k[0] == name)[:8]})')
        if want == 'basic':
            check_basic(tracks, events, slices, linked)
            check_bookkeeping(tracks, slices)
        elif want == 'ranks':
            check_ranks(tracks, slices, linked)
        elif want == 'um':
            check_um(tracks, events, slices)
        print(f'{trace}: {len(packets)} packets, {len(tracks)} tracks, {len(slices)} slices, '
              f'{linked} flows, {sum(sites.values())} with a call site')
    for m in FAILS[:40]:
        print('FAIL:', m)
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
