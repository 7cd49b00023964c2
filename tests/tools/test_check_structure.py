#!/usr/bin/env python3
"""test_check_structure.py CHECKER — tools/check_structure.py on small fake trees: a tree that
keeps every rule passes, and each tree that breaks one rule (one change to the good tree) fails
with that rule's message. Also the cases that must not be flagged (a static function named like a
later stage's, an allowed inline function, a folder with its own CMakeLists.txt)."""
import os
import shutil
import subprocess
import sys
import tempfile

CHECKER = os.path.abspath(sys.argv[1])

GOOD = {
    'CMakeLists.txt': 'project(fake)\n# the stages, in order\nset(GT_ANALYZER_STAGES common\n'
                      '    model advice)\n',
    'analyzer/common/util.h': '#ifndef U_H\n#define U_H\n#include <stdint.h>\n'
                              'static inline uint64_t gt_mix64(uint64_t x)\n{\n    return x * 3;\n}\n'
                              'int util_twice(int x);\n#endif\n',
    'analyzer/common/util.c': '#include "util.h"\nint util_twice(int x)\n{\n    return 2 * x;\n}\n',
    'analyzer/model/model.h': '#include "util.h"\nint model_value(void);\n',
    'analyzer/model/model_load.c': '/* model_load.c — the loader. The builders, in order:\n'
                                   ' *   core     model_core.c     shared\n'
                                   ' *   calls    model_calls.c    calls\n'
                                   ' *   steps    model_steps*.c   steps\n'
                                   ' */\n#include "model.h"\n'
                                   'int model_value(void)\n{\n    return md_steps() + md_calls();\n}\n',
    'analyzer/model/model_core.c': '#include "model.h"\nint md_core(void)\n{\n'
                                   '    return util_twice(1);\n}\n',
    'analyzer/model/model_calls.c': '#include "model.h"\nint md_calls(void)\n{\n'
                                    '    return md_core();\n}\n',
    'analyzer/model/model_steps.c': '#include "model.h"\nint md_steps(void)\n{\n'
                                    '    return md_calls() + md_steps_take();\n}\n',
    'analyzer/model/model_steps_take.c': '#include "model.h"\nint md_steps_take(void)\n{\n'
                                         '    return md_core();\n}\n',
    'analyzer/model/op_link.c': '#include "model.h"\nint op_link(void)\n{\n    return 1;\n}\n',
    # a static function of an earlier stage named like a later stage's function: not a call
    'analyzer/common/names.c': 'static int advise(void)\n{\n    return 0;\n}\n'
                               'int names_x(void)\n{\n    return advise();\n}\n',
    'analyzer/advice/advice.h': '#include "model.h"\nint advise(void);\n',
    'analyzer/advice/advice.c': '#include "advice.h"\nint advise(void)\n{\n'
                                '    return model_value() + op_link();\n}\n',
    'analyzer/doctor/CMakeLists.txt': 'add_library(doctor doctor.c)\n',
    'analyzer/doctor/doctor.c': 'int doctor(void)\n{\n    return advise();\n}\n',
    'format/fmt.h': 'struct rec {\n    int kind;\n};\ntypedef int (*rec_fn)(struct rec *r);\n',
}


def lines(n):
    return ''.join(f'int v{i};\n' for i in range(n))


# (what is broken, files changed: path -> text, None to delete; what the output must say)
BROKEN = [
    ('a .c file over 1,000 lines', {'analyzer/common/big.c': lines(1001)}, 'lines (at most 1000'),
    ('a header over 700 lines', {'analyzer/common/big.h': lines(701)}, 'lines (at most 700'),
    ('an include cycle', {'format/a.h': '#include "b.h"\n', 'format/b.h': '#include "a.h"\n'},
     'include cycle between units: format/a <-> format/b'),
    ('an include from a later stage',
     {'analyzer/model/model_core.c': '#include "model.h"\n#include "advice.h"\n'
                                     'int md_core(void)\n{\n    return 0;\n}\n'},
     'includes "advice.h" of stage advice, which comes after model'),
    ('a call into a later stage',
     {'analyzer/common/util.c': '#include "util.h"\nint util_twice(int x)\n{\n'
                                '    return md_calls() + x;\n}\n'},
     'analyzer/common/util.c: calls md_calls of analyzer/model/model_calls.c, a later stage'),
    ('a folder of C sources that is no stage', {'analyzer/extra/x.c': 'int x;\n'},
     'analyzer/extra/: holds C sources but is no stage'),
    ('no stage list', {'CMakeLists.txt': 'project(fake)\n'}, 'no set(GT_ANALYZER_STAGES'),
    ('a call cycle between model files',
     {'analyzer/model/op_link.c': '#include "model.h"\nint op_link(void)\n{\n'
                                  '    return op_order();\n}\n',
      'analyzer/model/op_order.c': '#include "model.h"\nint op_order(void)\n{\n'
                                   '    return op_link();\n}\n'},
     'call cycle between files: analyzer/model/op_link.c <-> analyzer/model/op_order.c'),
    ('a builder calling a later one',
     {'analyzer/model/model_calls.c': '#include "model.h"\nint md_calls(void)\n{\n'
                                      '    return md_steps_take();\n}\n'},
     'analyzer/model/model_calls.c (calls) calls md_steps_take of '
     'analyzer/model/model_steps_take.c (steps), a builder listed after it'),
    ('a builder not in the loader\'s list',
     {'analyzer/model/model_idle.c': '#include "model.h"\nint md_idle(void)\n{\n'
                                     '    return md_core();\n}\n'},
     'analyzer/model/model_idle.c: not in the builders\' order'),
    ('a function body in a header',
     {'analyzer/model/model.h': '#include "util.h"\nint model_value(void);\n'
                                'static inline int twice(int x)\n{\n    return 2 * x;\n}\n'},
     'analyzer/model/model.h:3: function twice defined in a header'),
    ('an extern function body in a header', {'format/fmt.h': 'int f(void)\n{\n    return 1;\n}\n'},
     'format/fmt.h:1: function f defined in a header'),
]


def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        if text is None:
            if os.path.exists(full):
                os.remove(full)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w', encoding='utf-8') as f:
            f.write(text)


def check(root):
    r = subprocess.run([sys.executable, CHECKER, root], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    failures = 0
    base = tempfile.mkdtemp(prefix='check_structure_')
    try:
        good = os.path.join(base, 'good')
        write_tree(good, GOOD)
        rc, out = check(good)
        if rc != 0 or '0 problem(s)' not in out:
            print(f'FAIL: the good tree: exit {rc}\n{out}')
            failures += 1
        else:
            print('ok: the good tree passes')
        for i, (what, change, expect) in enumerate(BROKEN):
            root = os.path.join(base, f'broken{i}')
            shutil.copytree(good, root)
            write_tree(root, change)
            rc, out = check(root)
            if rc != 1 or expect not in out:
                print(f'FAIL: {what}: exit {rc}, expected "{expect}" in:\n{out}')
                failures += 1
            else:
                print(f'ok: {what} is caught')
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f'{len(BROKEN) + 1 - failures} passed, {failures} failed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
