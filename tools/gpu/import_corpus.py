#!/usr/bin/env python3
"""Take the recordings tools/gpu/corpus_variants.sh brought back from the GPU machine into the
test corpus: each case becomes tests/data/corpus/<case>.tar.xz, the layout tests/corpus/
test_corpus.py reads (<case>/run/ with every process's trace, <case>/cmd.txt, <case>/traced.out
with the program's CORPUS line, and the logs beside them).

    tools/gpu/import_corpus.py [--data DIR] [--only CASE,...] [--force] [--list] FILE...

FILE is a bundle corpus_<label>_<k>.tar (a tar of <case>.tar.xz files) or one <case>.tar.xz.
Each case archive is checked before it is written: one top folder named as the case, no links,
devices or paths out of it, at least one .gtrace under <case>/run/, and a traced.out holding a
CORPUS line (a run that failed or timed out has none: it is refused, and named). An archive already
in DIR is kept unless --force. --list only prints what the files hold. Exit status: 0 when every
case asked for was imported (or listed), 1 when one was refused, 2 on bad arguments.
After importing, `ctest -R corpus` runs each imported case that tests/corpus/corpus_variants.py
describes.
"""
import argparse
import io
import os
import sys
import tarfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DATA = os.path.join(REPO, "tests", "data", "corpus")
BIG_BYTES = 2_000_000  # a case archive larger than this is worth a second look before committing


def case_archives(path):
    """(case name, bytes of its .tar.xz) for each case archive in a bundle or a loose file."""
    name = os.path.basename(path)
    if name.endswith(".tar.xz"):
        with open(path, "rb") as f:
            return [(name[: -len(".tar.xz")], f.read())]
    out = []
    with tarfile.open(path) as bundle:
        for member in bundle.getmembers():
            base = os.path.basename(member.name)
            if member.isfile() and base.endswith(".tar.xz"):
                out.append((base[: -len(".tar.xz")], bundle.extractfile(member).read()))
    return out


def check_case(case, data):
    """None when the archive is a whole recorded run of `case`, else what is wrong with it; and
    a one-line description."""
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:xz")
        members = archive.getmembers()
    except (tarfile.TarError, EOFError, OSError) as e:
        return "not a readable .tar.xz: %s" % e, ""
    traces, corpus_lines = 0, []
    for m in members:
        parts = m.name.split("/")
        if parts[0] != case or os.path.isabs(m.name) or ".." in parts:
            return "member %r outside %s/" % (m.name, case), ""
        if not (m.isfile() or m.isdir()):
            return "member %r is not a plain file or folder" % m.name, ""
        if m.isfile() and len(parts) == 3 and parts[1] == "run" and parts[2].endswith(".gtrace"):
            traces += 1
        if m.isfile() and m.name == case + "/traced.out":
            text = archive.extractfile(m).read().decode("utf-8", "replace")
            corpus_lines = [l for l in text.splitlines() if l.startswith("CORPUS ")]
    if not traces:
        return "no .gtrace under %s/run/" % case, ""
    if not corpus_lines:
        return "no CORPUS line in %s/traced.out (the program failed or timed out)" % case, ""
    return None, "%d trace files, %d CORPUS line(s): %s" % (
        traces, len(corpus_lines), corpus_lines[0][:150])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", help="corpus_<label>_<k>.tar bundles or <case>.tar.xz")
    p.add_argument("--data", default=DEFAULT_DATA, help="where the case archives go")
    p.add_argument("--only", default="", help="comma-separated case names to import")
    p.add_argument("--force", action="store_true", help="replace archives already there")
    p.add_argument("--list", action="store_true", help="only print what the files hold")
    args = p.parse_args(argv)
    only = {c for c in args.only.split(",") if c}
    refused, imported, seen = [], [], set()
    for path in args.files:
        try:
            cases = case_archives(path)
        except (OSError, tarfile.TarError) as e:
            print("import_corpus: %s: %s" % (path, e), file=sys.stderr)
            return 2
        for case, data in cases:
            if only and case not in only:
                continue
            seen.add(case)
            wrong, what = check_case(case, data)
            size = "%.2f MB" % (len(data) / 1e6)
            if wrong:
                refused.append(case)
                print("refused  %-36s %s: %s" % (case, size, wrong))
                continue
            dest = os.path.join(args.data, case + ".tar.xz")
            if args.list:
                print("case     %-36s %s: %s" % (case, size, what))
                continue
            if os.path.exists(dest) and not args.force:
                print("kept     %-36s %s already there (--force replaces it)" % (case, dest))
                continue
            os.makedirs(args.data, exist_ok=True)
            with open(dest + ".part", "wb") as f:
                f.write(data)
            os.replace(dest + ".part", dest)
            imported.append(case)
            big = "  (large: check before committing)" if len(data) > BIG_BYTES else ""
            print("imported %-36s %s: %s%s" % (case, size, what, big))
    for case in sorted(only - seen):
        refused.append(case)
        print("missing  %-36s in none of the files" % case)
    print("%d imported, %d refused" % (len(imported), len(refused)))
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
