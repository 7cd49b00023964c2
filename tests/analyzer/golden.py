#!/usr/bin/env python3
"""golden.py — what every command makes of every trace in tests/data, held against files in
tests/analyzer/golden/ (one per trace and output), so that a change to the analyzer's model or
converter shows each difference it makes.

usage: golden.py GPUTRACE PROTO DATADIR GOLDENDIR [--update] [--only NAME]...

Per trace NAME.gtrace:
  NAME.report.json   `gputrace report --json` (traces named relative to DATADIR)
  NAME.diff.json     `gputrace diff --json` of the trace against healthy.gtrace (a fixed reference)
  NAME.perfetto.txt  `gputrace convert` decoded with protoc, summarized without anything that
                     depends on hashing (uuids, sequence and flow ids): per track its slices
                     (count and a digest of their times, names and arguments), counters and
                     instants; the flows (started, terminated, both ends present) and which slice
                     names each drawn arrow joins.
Source lines and names read from the machine's binaries are off (GPUTRACE_SOURCE_LINES=off,
GPUTRACE_LOCAL_BINARIES=off): they depend on the machine.
Exit 0 when everything matches (or --update wrote the files), 1 with a unified diff otherwise."""
import difflib
import hashlib
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_convert_check as cc  # noqa: E402

REFERENCE = 'healthy.gtrace'


def run(cmd):
    # Nothing from this machine: no saved peaks, no names or lines read from its binaries.
    env = dict(os.environ, GPUTRACE_SOURCE_LINES='off', GPUTRACE_PEAKS='off',
               GPUTRACE_LOCAL_BINARIES='off')
    res = subprocess.run(cmd, capture_output=True, env=env)
    return res.returncode, res.stdout


def digest(items):
    h = hashlib.sha256()
    for it in items:
        h.update(repr(it).encode())
        h.update(b'\n')
    return h.hexdigest()[:16]


def arg_items(te):
    return tuple(sorted((cc.one(a, 'name'), str(cc.arg_value(a)))
                        for a in te.get('debug_annotations', [])))


def perfetto_summary(gputrace, proto, trace, work):
    out = os.path.join(work, os.path.basename(trace) + '.pftrace')
    rc, _ = run([gputrace, 'convert', '-q', '-o', out, trace])
    lines = [f'exit {rc}']
    if not os.path.exists(out):
        return '\n'.join(lines) + '\n'
    with open(out, 'rb') as f:
        res = subprocess.run(['protoc', '--decode=perfetto.protos.Trace',
                              '--proto_path=' + os.path.dirname(os.path.abspath(proto)),
                              os.path.abspath(proto)], stdin=f, capture_output=True)
    os.unlink(out)
    if res.returncode:
        return '\n'.join(lines + ['protoc failed']) + '\n'
    root = cc.parse_text(res.stdout.decode('utf-8', 'replace'))
    cc.FAILS.clear()
    tracks, events = cc.check(root.get('packet', []))
    slices = cc.check_nesting(events)

    def track_name(uuid):
        td = tracks.get(uuid)
        if td is None:
            return '?'
        if 'thread' in td:
            th = td['thread'][0]
            return f"thread {cc.one(th, 'thread_name', '')} (tid {cc.one(th, 'tid')})"
        if 'process' in td:
            pr = td['process'][0]
            return f"process {cc.one(pr, 'process_name', '')} (pid {cc.one(pr, 'pid')})"
        return cc.one(td, 'name', '?')

    per_track = defaultdict(list)
    for s in slices:
        per_track[track_name(s[0])].append((s[1], s[2] - s[1], s[3], tuple(s[4]), arg_items(s[5])))
    counters = defaultdict(list)
    instants = defaultdict(list)
    for ev in events:
        if ev[6] == 'TYPE_COUNTER':
            counters[track_name(ev[5])].append(
                (ev[1], cc.one(ev[2], 'counter_value', cc.one(ev[2], 'double_counter_value'))))
        elif ev[6] == 'TYPE_INSTANT':
            instants[(track_name(ev[5]), ev[3])].append((ev[1], arg_items(ev[2])))
    lines.append(f'tracks {len(tracks)}')
    for name in sorted(per_track):
        v = sorted(per_track[name])
        lines.append(f'slices {name}: {len(v)} {digest(v)}')
    for name in sorted(counters):
        v = sorted(counters[name], key=repr)
        lines.append(f'counter {name}: {len(v)} {digest(v)}')
    for key in sorted(instants):
        v = sorted(instants[key], key=repr)
        lines.append(f'instants {key[0]} / {key[1]}: {len(v)} {digest(v)}')
    # Flows: which slice (or instant) names each id joins, by timestamp as the importer does.
    where = {}  # flow id -> [start name, end name]
    starts, terms = Counter(), Counter()
    end_name = {id(s[6]): s[3] for s in slices}  # END events carry no name of their own
    for ev in events:
        te = ev[2]
        name = ev[3] if ev[3] is not None else end_name.get(id(te))
        for fid in te.get('flow_ids', []):
            starts[fid] += 1
            where.setdefault(fid, [None, None])[0] = name
        for fid in te.get('terminating_flow_ids', []):
            terms[fid] += 1
            where.setdefault(fid, [None, None])[1] = name
    both = [fid for fid in where if fid in starts and fid in terms]
    lines.append(f'flows started {len(starts)}, terminated {len(terms)}, both ends {len(both)}')
    pairs = Counter((where[f][0], where[f][1]) for f in both)
    for (a, b), n in sorted(pairs.items(), key=lambda kv: (-kv[1], repr(kv[0])))[:40]:
        lines.append(f'arrow {a} -> {b}: {n}')
    if len(pairs) > 40:
        lines.append(f'arrow kinds not listed: {len(pairs) - 40} ({sum(pairs.values())} arrows)')
    return '\n'.join(lines) + '\n'


def json_text(rc, out):
    try:
        doc = json.loads(out)
        return f'exit {rc}\n' + json.dumps(doc, indent=1, sort_keys=True) + '\n'
    except ValueError:
        return f'exit {rc}\nnot JSON: {out[:200]!r}\n'


def main():
    args = sys.argv[1:]
    update = '--update' in args
    if update:
        args.remove('--update')
    only = []
    while '--only' in args:
        i = args.index('--only')
        only.append(args[i + 1])
        del args[i:i + 2]
    gputrace, proto, data, gold = (os.path.abspath(a) for a in args)
    os.chdir(data)  # the outputs name the traces as given: relative, the same everywhere
    os.makedirs(gold, exist_ok=True)
    work = os.path.join(gold if update else os.environ.get('TMPDIR', '/tmp'),
                        f'.golden_work_{os.getpid()}')
    os.makedirs(work, exist_ok=True)
    names = sorted(f[:-7] for f in os.listdir(data) if f.endswith('.gtrace'))
    if only:
        names = [n for n in names if n in only]
    bad = 0
    for name in names:
        trace = name + '.gtrace'
        got = {
            'report.json': json_text(*run([gputrace, 'report', '--json', trace])),
            'diff.json': json_text(*run([gputrace, 'diff', '--json',
                                         REFERENCE, trace])),
            'perfetto.txt': perfetto_summary(gputrace, proto, trace, work),
        }
        for kind, text in got.items():
            path = os.path.join(gold, f'{name}.{kind}')
            if update:
                with open(path, 'w') as f:
                    f.write(text)
                continue
            want = open(path).read() if os.path.exists(path) else ''
            if want != text:
                bad += 1
                print(f'DIFFERS: {name}.{kind}')
                sys.stdout.writelines(list(difflib.unified_diff(
                    want.splitlines(True), text.splitlines(True), f'golden/{name}.{kind}',
                    'now', n=1))[:60])
        print(f'{name}: {"written" if update else "checked"}', flush=True)
    os.rmdir(work)
    print(f'{len(names)} traces, {bad} outputs differ')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
