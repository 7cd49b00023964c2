#!/usr/bin/env python3
"""check_structure.py — the repository's shape rules that a compiler does not check:

1. size: no C source file (.c, .h) of the non-test tree over 1,000 lines, no header over 700 (a
   file that grows past that holds more than one responsibility: split it, docs/contributing.md
   says how);
2. include cycles: none between source units. A unit is a .c file and the .h of the same name in
   the same folder (analyzer/model/op_link.c + analyzer/model/op_link.h); unit A depends on unit
   B when A's .c or .h includes B's header ("B.h", resolved against the including file's folder,
   then against every folder that holds a header of that name in the tree);
3. the analyzer's stages: the folders listed by GT_ANALYZER_STAGES in the top CMakeLists.txt (the
   one place the order is written), in dependency order. A stage's files include headers of their
   own stage and of earlier ones only, and call functions defined there only (a grep of the
   functions each file defines against the names each file uses). A folder of analyzer/ with C
   sources is a stage or has its own CMakeLists.txt (doctor/), else it would not be built;
4. the model's builders: no call cycle between the files of analyzer/model, and the calls between
   its builders follow the order listed at the top of analyzer/model/model_load.c (a builder calls
   those listed before it, never one after); every model_*.c file is in that list;
5. no logic in headers: a function defined in a header (static inline) is allowed only where
   HEADER_FUNCTIONS_ALLOWED says why (hot paths measured to need it).

usage: check_structure.py [ROOT]   (default: the repository holding this script)
Lists every violation; exit 1 when there is one, 0 otherwise. tools/test.sh counts it as one test;
tests/tools/test_check_structure.py checks that each rule catches what it should.
"""
import fnmatch
import os
import re
import subprocess
import sys
from collections import defaultdict

MAX_LINES = 1000
MAX_HEADER_LINES = 700
# The test tree (tests/) and generated or vendored code are not held to these rules.
EXCLUDED_TOP = ('tests/',)
# The sample programs are programs to trace, each self-contained: their helpers may live in their
# shared header.
HEADER_RULE_EXCLUDED_TOP = ('tests/', 'sample_apps/')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
STAGES_SET = re.compile(r'set\(\s*GT_ANALYZER_STAGES\s+([^)]*)\)')
ANALYZER = 'analyzer/'
MODEL = 'analyzer/model/'
MODEL_LOADER = 'analyzer/model/model_load.c'
# The builder list in model_load.c's opening comment: " *   steps    model_steps*.c    ..."
BUILDER_LINE = re.compile(r'^\s*\*\s+([a-z_]+)\s+(model_[\w*]+\.c)\s', re.M)
# Folders whose files must not call each other in a circle (file by file).
CALL_CYCLE_FREE = ('analyzer/model/',)

# Functions defined in headers, by header: the names allowed ('*': all of that header's), and why.
HEADER_FUNCTIONS_ALLOWED = {
    'analyzer/common/util.h': (
        ('gt_mix64', 'gt_hash_slot', 'gt_body_copy'),
        'a hash step and a record copy run per record and per lookup in every stage (callgrind '
        'puts ~4% of a conversion inside them, inlined); LTO is the converter\'s only'),
    'format/gt_encode.h': (('gt_record_size',), 'per record, in the recorder and the reader'),
    'cupti/gt_cupti_internal.h': (
        ('gt_cupti_corr', 'gt_cupti_cb_enter_call', 'gt_cupti_cb_leave_call'),
        'the injected library\'s CUPTI callbacks, on every wrapped call'),
    'interpose/core/gt_core_fast.h': (
        '*', 'the injected library\'s per-call fast path (clock, guard, ring reservation): '
        'always_inline by design, docs/evidence/performance-log.md'),
    'interpose/wrap/gt_wrap.h': ('*', 'the wrappers\' per-call begin/end, inlined into each '
                                      'wrapper: the cost of a wrapped call'),
    'interpose/wrap/gt_resolve.h': (('gt_sym_get',), 'the real function\'s pointer, per call'),
}


def run_git(root, *args):
    return subprocess.run(['git', '-C', root] + list(args), capture_output=True, text=True,
                          check=True).stdout


def tracked_sources(root):
    """The tracked C files when root is a git work tree's top, else every C file under root."""
    try:
        top = run_git(root, 'rev-parse', '--show-toplevel').strip()
        if os.path.realpath(top) != os.path.realpath(root):
            raise ValueError('not the top of a work tree')
        out = run_git(root, 'ls-files', '*.c', '*.h').split()
    except (OSError, subprocess.CalledProcessError, ValueError):
        out = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith('.') and not x.startswith('build')]
            out += [os.path.relpath(os.path.join(d, f), root) for f in files
                    if f.endswith(('.c', '.h'))]
    return sorted(f for f in out if not f.startswith(EXCLUDED_TOP))


def unit_of(path):
    return os.path.splitext(path)[0]


def find_cycles(graph):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
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


# ------------------------------------------------------------------ a C file, read roughly

def code_only(text):
    """The text without comments, string and character literals and preprocessor lines (line
    breaks kept, so that line numbers hold)."""
    blank = lambda m: '\n' * m.group(0).count('\n')
    text = re.sub(r'/\*.*?\*/|//[^\n]*', blank, text, flags=re.S)
    text = re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', blank, text, flags=re.M)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)


FUNC_HEAD = re.compile(r'\b([A-Za-z_]\w*)\s*\((?:[^()]|\([^()]*\))*\)\s*'
                       r'(?:__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*)*$')


def function_definitions(code):
    """(name, line, is_static) of every function defined at file scope in code (code_only's)."""
    found, depth, start = [], 0, 0
    for i, ch in enumerate(code):
        if ch == '{':
            if depth == 0:
                head = code[start:i]
                m = FUNC_HEAD.search(head)
                lead = head.strip()
                if m and '=' not in head and not lead.startswith('typedef'):
                    before = head[:m.start()]
                    found.append((m.group(1), code.count('\n', 0, start + m.start(1)) + 1,
                                  re.search(r'\bstatic\b', before) is not None))
            depth += 1
        elif ch == '}':
            depth = max(depth - 1, 0)
            if depth == 0:
                start = i + 1
        elif ch == ';' and depth == 0:
            start = i + 1
    return found


def identifiers(code):
    return set(re.findall(r'\b[A-Za-z_]\w*\b', code))


# ------------------------------------------------------------------ the rules

def read_stages(root):
    try:
        text = open(os.path.join(root, 'CMakeLists.txt'), encoding='utf-8').read()
    except OSError:
        return None
    m = STAGES_SET.search(re.sub(r'#[^\n]*', '', text))
    return m.group(1).split() if m else None


def stage_of(path, stages):
    if not path.startswith(ANALYZER):
        return None
    parts = path[len(ANALYZER):].split('/')
    return parts[0] if len(parts) > 1 and parts[0] in stages else None


def check_stage_folders(root, files, stages, problems):
    folders = sorted({f[len(ANALYZER):].split('/')[0] for f in files
                      if f.startswith(ANALYZER) and f.count('/') >= 2})
    for d in folders:
        if d not in stages and not os.path.exists(os.path.join(root, ANALYZER, d,
                                                               'CMakeLists.txt')):
            problems.append(f'{ANALYZER}{d}/: holds C sources but is no stage: add it to '
                            'GT_ANALYZER_STAGES in CMakeLists.txt (in dependency order), or give it '
                            'a CMakeLists.txt of its own')


def check_stage_includes(resolved, stages, problems):
    rank = {s: i for i, s in enumerate(stages)}
    for f, targets in sorted(resolved.items()):
        me = stage_of(f, stages)
        if me is None:
            continue
        for inc, t in targets:
            other = stage_of(t, stages)
            if other is not None and rank[other] > rank[me]:
                problems.append(f'{f}: includes "{inc}" of stage {other}, which comes after {me} '
                                f'in GT_ANALYZER_STAGES ({" ".join(stages)}): move what both need '
                                'to the earlier stage')


def check_stage_calls(defined_in, uses, stages, problems):
    rank = {s: i for i, s in enumerate(stages)}
    for f in sorted(uses):
        me = stage_of(f, stages)
        if me is None:
            continue
        later = defaultdict(set)
        for name in uses[f]:
            where = defined_in.get(name)
            if not where:
                continue
            ranks = [rank[s] for s in (stage_of(g, stages) for g in where) if s is not None]
            if ranks and min(ranks) > rank[me]:
                later[min(where)].add(name)
        for g, names in sorted(later.items()):
            problems.append(f'{f}: calls {", ".join(sorted(names))} of {g}, a later stage than '
                            f'{me} in GT_ANALYZER_STAGES: a stage calls only itself and earlier '
                            'stages')


def call_graph(files, defined_in, uses):
    """File -> files whose functions it uses (functions defined in one file only)."""
    graph = defaultdict(set)
    for f in files:
        graph[f]
        for name in uses.get(f, ()):
            where = defined_in.get(name)
            if where and len(where) == 1 and where[0] != f:
                graph[f].add(where[0])
    return graph


def check_call_cycles(defined_in, uses, problems):
    for folder in CALL_CYCLE_FREE:
        files = sorted(f for f in uses if f.startswith(folder) and f.endswith('.c'))
        for comp in find_cycles(call_graph(files, defined_in, uses)):
            problems.append('call cycle between files: ' + ' <-> '.join(comp) + ' (one of them '
                            'should call the other only, or what both need goes to a third)')


def read_builders(root):
    """[(name, file pattern)] from the opening comment of the model's loader, None without one."""
    try:
        text = open(os.path.join(root, MODEL_LOADER), encoding='utf-8').read()
    except OSError:
        return None
    m = re.match(r'\s*/\*.*?\*/', text, re.S)
    return BUILDER_LINE.findall(m.group(0)) if m else []


def check_builders(root, defined_in, uses, problems):
    builders = read_builders(root)
    if builders is None:
        return
    files = sorted(f for f in uses if f.startswith(MODEL) and f.endswith('.c') and
                   os.path.basename(f).startswith('model_') and f != MODEL_LOADER)
    rank = {}
    for f in files:
        hits = [i for i, (_, pat) in enumerate(builders)
                if fnmatch.fnmatch(os.path.basename(f), pat)]
        if not hits:
            problems.append(f'{f}: not in the builders\' order at the top of {MODEL_LOADER}: list '
                            'it after the builders it calls')
        else:
            rank[f] = hits[0]
    graph = call_graph(files, defined_in, uses)
    for f in sorted(rank):
        for g in sorted(graph[f]):
            if g in rank and rank[g] > rank[f]:
                names = sorted(n for n in uses[f] if defined_in.get(n) == [g])
                problems.append(f'{f} ({builders[rank[f]][0]}) calls {", ".join(names)} of {g} '
                                f'({builders[rank[g]][0]}), a builder listed after it in '
                                f'{MODEL_LOADER}: builders call earlier ones only')


def check_header_functions(f, code, problems):
    if not f.endswith('.h') or f.startswith(HEADER_RULE_EXCLUDED_TOP):
        return
    allowed = HEADER_FUNCTIONS_ALLOWED.get(f, ((), ''))[0]
    for name, line, _ in function_definitions(code):
        if allowed != '*' and name not in allowed:
            problems.append(f'{f}:{line}: function {name} defined in a header: move it to a .c '
                            'file (a hot path measured to need it inline goes in '
                            'HEADER_FUNCTIONS_ALLOWED of tools/check_structure.py, with why)')


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
    resolved = {}
    defined_in = defaultdict(list)
    uses = {}
    for f in files:
        try:
            text = open(os.path.join(root, f), encoding='utf-8', errors='replace').read()
        except OSError:
            continue
        n = text.count('\n')
        limit = MAX_HEADER_LINES if f.endswith('.h') else MAX_LINES
        if n > limit:
            problems.append(f'{f}: {n} lines (at most {limit}: split it by responsibility)')
        me = unit_of(f)
        graph[me]  # every unit is a node
        resolved[f] = []
        for inc in INCLUDE.findall(text):
            local = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            targets = [local] if local in files else headers_by_name.get(os.path.basename(inc), [])
            for t in targets:
                resolved[f].append((inc, t))
                if unit_of(t) != me:
                    graph[me].add(unit_of(t))
        code = code_only(text)
        check_header_functions(f, code, problems)
        if f.startswith(ANALYZER):
            own = function_definitions(code)
            uses[f] = identifiers(code) - {name for name, _, _ in own}  # its statics shadow
            if f.endswith('.c'):
                for name, _, is_static in own:
                    if not is_static:
                        defined_in[name].append(f)
    for comp in find_cycles(graph):
        problems.append('include cycle between units: ' + ' <-> '.join(comp))
    stages = read_stages(root)
    if stages is None and any(f.startswith(ANALYZER) for f in files):
        problems.append('CMakeLists.txt: no set(GT_ANALYZER_STAGES ...): the stage order is '
                        'written there')
    elif stages:
        check_stage_folders(root, files, stages, problems)
        check_stage_includes(resolved, stages, problems)
        check_stage_calls(defined_in, uses, stages, problems)
    check_call_cycles(defined_in, uses, problems)
    check_builders(root, defined_in, uses, problems)
    for p in problems:
        print(p)
    print(f'check_structure: {len(files)} C sources, {len(graph)} units, '
          f'{len(stages or [])} analyzer stages, {len(problems)} problem(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
