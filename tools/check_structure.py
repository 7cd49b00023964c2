#!/usr/bin/env python3
"""check_structure.py — the repository's shape rules that a compiler does not check:

1. no C source file (.c, .h) of the non-test tree over 1,000 lines (a file that grows past that
   holds more than one responsibility: split it, docs/contributing.md says how);
2. no include cycle between source units. A unit is a .c file and the .h of the same name in the
   same folder (analyzer/model/op_link.c + analyzer/model/op_link.h); unit A depends on unit B when A's .c or .h
   includes B's header ("B.h", resolved against the including file's folder, then against every
   folder that holds a header of that name in the tree).

usage: check_structure.py [ROOT]   (default: the repository holding this script)
Lists every violation; exit 1 when there is one, 0 otherwise. tools/test.sh counts it as one test.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

MAX_LINES = 1000
# The test tree (tests/) and generated or vendored code are not held to these rules.
EXCLUDED_TOP = ('tests/',)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tracked_sources(root):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '*.c', '*.h'], capture_output=True,
                             text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d, _, files in os.walk(root):
            if '/.' in d or '/build' in d:
                continue
            out += [os.path.relpath(os.path.join(d, f), root) for f in files
                    if f.endswith(('.c', '.h'))]
    return sorted(f for f in out if not f.startswith(EXCLUDED_TOP))


def unit_of(path):
    return os.path.splitext(path)[0]


def find_cycles(graph):
    """Strongly connected components with more than one unit (Tarjan, iterative)."""
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.append(x)
                    if x == node:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))
    return sccs


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    files = tracked_sources(root)
    problems = []
    headers_by_name = defaultdict(list)
    for f in files:
        if f.endswith('.h'):
            headers_by_name[os.path.basename(f)].append(f)
    graph = defaultdict(set)
    for f in files:
        try:
            text = open(os.path.join(root, f), encoding='utf-8', errors='replace').read()
        except OSError:
            continue
        n = text.count('\n')
        if n > MAX_LINES:
            problems.append(f'{f}: {n} lines (at most {MAX_LINES}: split it by responsibility)')
        me = unit_of(f)
        graph[me]  # every unit is a node
        for inc in INCLUDE.findall(text):
            local = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            targets = [local] if local in files else headers_by_name.get(os.path.basename(inc), [])
            for t in targets:
                if unit_of(t) != me:
                    graph[me].add(unit_of(t))
    for comp in find_cycles(graph):
        problems.append('include cycle between units: ' + ' <-> '.join(comp))
    for p in problems:
        print(p)
    print(f'check_structure: {len(files)} C sources, {len(graph)} units, '
          f'{len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
