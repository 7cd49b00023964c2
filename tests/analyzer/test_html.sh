#!/bin/sh
# test_html.sh GPUTRACE DATADIR WORKDIR — `gputrace report --html` opened in a real browser.
#
# For traces recorded on an H200 (a ResNet-50 training run, a launch-bound loop, a healthy one):
# the page is written, holds no reference to anything outside itself, and Debian's Chromium,
# headless, draws it: the page's own
# script marks <body data-rendered="ok"> when it has drawn every section (or "error" with the
# message), the browser's console stays silent (--enable-logging: any message, an uncaught
# exception included, fails the test), and the drawn DOM holds each section with its content:
# the verdict, the GPU busy bars, a stacked bar per phase and for the steady step, the advice
# with its call site, the kernel and copy tables.
# Without Chromium the test is skipped (exit 77, with the reason); tools/test.sh installs it.
set -u
GPUTRACE=$1 DATA=$2 WORK=$3
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$BROWSER" ]; then
    echo "SKIPPED: no Chromium here (apt-get install chromium; tools/test.sh installs it)"
    exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# count PATTERN FILE: the number of matches (grep -c counts lines; the DOM is a few long lines)
count() { grep -o "$1" "$2" | wc -l; }

render() { # page -> page.dom, page.log
    timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$WORK/profile" --enable-logging=stderr --v=0 \
        --virtual-time-budget=5000 --dump-dom "file://$1" >"$1.dom" 2>"$1.log" ||
        fail "$BROWSER exited with status $? on $1 (log: $1.log)"
}

check_page() { # name trace expect_advice
    name=$1 trace=$2 advice=$3
    page=$WORK/$name.html
    "$GPUTRACE" report --html "$page" "$trace" >"$WORK/$name.out" 2>&1 ||
        fail "report --html $trace: status $?: $(cat "$WORK/$name.out")"
    [ -s "$page" ] || fail "$page not written"
    [ -s "$WORK/$name.out" ] && fail "--html printed something: $(head -3 "$WORK/$name.out")"
    # Self-contained: nothing fetched (no src/href to a file or the network, no @import).
    # (The SVG namespace is a name, not an address: never fetched.)
    outside=$(grep -Eo '(src|href)=[^ >]*|@import|https?://[^ "]*' "$page" |
        grep -v '^http://www.w3.org/2000/svg$' | head -3)
    [ -z "$outside" ] || fail "$name.html refers to something outside itself: $outside"
    # The data block cannot end the script early: a '<' inside it is escaped.
    [ "$(count '</script>' "$page")" = 2 ] || fail "$name.html: the data block holds a </script>"
    render "$page"
    tr -d '\n' <"$page.dom" >"$page.line" # one line: sections are cut out with sed below
    dom=$page.line
    grep -q 'data-rendered="ok"' "$dom" ||
        fail "$name: the page's script did not finish: $(grep -o 'data-rendered="[a-z]*"' "$dom") $(grep -o '<div id="gt-errors">[^<]*' "$dom")"
    grep -q '<div id="gt-errors"></div>' "$dom" || fail "$name: errors shown: $(grep -o '<div id="gt-errors">[^<]*' "$dom")"
    if grep -q ':CONSOLE' "$page.log"; then
        fail "$name: the browser's console: $(grep ':CONSOLE' "$page.log" | head -3)"
    fi
    for id in verdict timeline phases advice kernels copies processes; do
        grep -q "<section id=\"$id\">" "$dom" || fail "$name: section $id missing"
    done
    grep -q 'class="big">Steady step [0-9.]* [mµ]*s (median of [0-9]* steps), GPU busy [0-9.]*% in the steady state' "$dom" ||
        fail "$name: the verdict's headline: $(grep -o 'class="big">[^<]*' "$dom")"
    # GPU busy over time: one bar per bin with work (200 bins), in the timeline's SVG.
    bars=$(sed 's/<section id="phases">.*//' "$dom" | grep -o '<rect [^>]*fill="#2f7d4f"' | wc -l)
    [ "$bars" -ge 20 ] || fail "$name: $bars busy bars in the timeline"
    # A stacked bar per phase and one for the steady step, each made of its parts.
    phases=$(sed -n 's/.*<section id="phases">\(.*\)<\/section><section id="advice">.*/\1/p' "$dom")
    for label in "steady state" "steady step (median)"; do
        echo "$phases" | grep -q ">$label</text>" || fail "$name: no bar for '$label'"
    done
    [ "$(echo "$phases" | grep -o '<rect ' | wc -l)" -ge 6 ] || fail "$name: the phase bars have no parts"
    echo "$phases" | grep -q 'GPU idle: ' || fail "$name: the phases' legend names no idle cause"
    # The top kernels with their names (return type and parameters left out), and the copies.
    kernels=$(sed -n 's/.*<section id="kernels">\(.*\)<\/section><section id="copies">.*/\1/p' "$dom")
    krows=$(echo "$kernels" | grep -o '<tr>' | wc -l)
    distinct=$(echo "$kernels" | sed -n 's/.*kernels (\([0-9]*\) distinct).*/\1/p')
    want=$(( (distinct < 15 ? distinct : 15) + 1 )) # --top's 15 rows and the header
    [ -n "$distinct" ] && [ "$krows" = "$want" ] ||
        fail "$name: $krows rows in the kernel table of $distinct kernels"
    [ "$(echo "$kernels" | grep -o 'class="name" title="[^"]' | wc -l)" = "$((want - 1))" ] ||
        fail "$name: kernel names lack their full name as title"
    grep -Eq '<th>direction</th>|No copies recorded.' "$dom" || fail "$name: the copies section"
    if [ -n "$advice" ]; then
        grep -q "<b>$advice</b>" "$dom" || fail "$name: advice $advice not shown"
    fi
    echo "ok: $name ($bars busy bars, $krows kernel rows)"
}

check_page resnet50 "$DATA/resnet50_train.gtrace" pinned-memory
grep -q 'class="site">at train.py:125 in main' "$WORK/resnet50.html.line" ||
    fail "resnet50: the pinned-memory advice's call site"
grep -q '<td>HtoD</td><td>pageable</td><td class="num">360</td>' "$WORK/resnet50.html.line" ||
    fail "resnet50: the pageable copies in the copies table"
check_page launch_bound "$DATA/launch_bound.gtrace" launch-bound
check_page healthy "$DATA/healthy.gtrace" ""

# A file that is not a trace: no page, an error, status 2; the browser is not needed.
echo "not a trace" >"$WORK/bad.gtrace"
"$GPUTRACE" report --html "$WORK/bad.html" "$WORK/bad.gtrace" >/dev/null 2>"$WORK/bad.err"
rc=$?
[ "$rc" = 2 ] || fail "not a trace: status $rc"
echo "ok: all pages drawn by $BROWSER"
