#!/usr/bin/env bash
# tools/docs_refresh.sh — remake what the docs show of gputrace's own output, from real H200 traces
# committed in tests/data (no GPU needed), so the README never shows output the tool no longer
# prints:
#  - README.md, between <!-- example:begin --> and <!-- example:end -->: what `gputrace record`
#    printed for the corpus's DataLoader-bound program (tests/data/corpus/dataloader_bound.tar.xz),
#    i.e. `gputrace report --brief` of its run folder at 100 columns;
#  - docs/quickstart.md, between <!-- verdict:begin --> and <!-- verdict:end -->: the verdict of
#    `gputrace report tests/data/resnet50_train.gtrace` (its lines up to the first blank one);
#  - docs/img/report-html.png: the top of the page `gputrace report --html` writes for that trace,
#    shot by a headless Chromium and reduced to a palette (pngquant) so the file stays small.
# Environment: BUILD (default build), NO_IMAGE=1 to leave the picture alone.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/lib.sh
BUILD=${BUILD:-build}
GPUTRACE=$BUILD/bin/gputrace
[ -x "$GPUTRACE" ] || { echo "build gputrace first (cmake --build $BUILD)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export COLUMNS=100 GPUTRACE_PEAKS=off NO_COLOR=1

# replace FILE TAG TEXTFILE: the fenced block between <!-- TAG:begin --> and <!-- TAG:end -->
replace() {
  python3 - "$1" "$2" "$3" <<'PY'
import sys
path, tag, text = sys.argv[1], sys.argv[2], open(sys.argv[3], encoding="utf-8").read()
s = open(path, encoding="utf-8").read()
begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
a, b = s.index(begin) + len(begin), s.index(end)
s = s[:a] + "\n```text\n" + text.rstrip("\n") + "\n```\n" + s[b:]
open(path, "w", encoding="utf-8").write(s)
PY
}

tar -xJf tests/data/corpus/dataloader_bound.tar.xz -C "$work"
"$GPUTRACE" report --brief "$work/dataloader_bound/run" >"$work/example.txt"
replace README.md example "$work/example.txt"
"$GPUTRACE" report tests/data/resnet50_train.gtrace >"$work/full.txt"
sed '/^$/q' "$work/full.txt" | sed '$d' >"$work/verdict.txt"
replace docs/quickstart.md verdict "$work/verdict.txt"
echo "README.md and docs/quickstart.md: examples refreshed"

[ "${NO_IMAGE:-0}" = 1 ] && exit 0
ensure_packages chromium pngquant
"$GPUTRACE" report --html "$work/report.html" tests/data/resnet50_train.gtrace
browser=$(command -v chromium || command -v chromium-browser)
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile" \
  --window-size=1100,900 --virtual-time-budget=5000 --screenshot="$work/shot.png" \
  "file://$work/report.html" 2>/dev/null
mkdir -p docs/img
pngquant --force --quality=60-85 --output docs/img/report-html.png "$work/shot.png"
echo "docs/img/report-html.png: $(stat -c %s docs/img/report-html.png) bytes"
