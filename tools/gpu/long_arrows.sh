#!/usr/bin/env bash
# GPU evidence for issue 33 item 0 (arrows on a long run): the converter must draw an arrow to
# every kernel the report links, however far the file puts a call from its kernels (CUPTI's
# buffers come in batches, late). Records sample_apps/tiny_launches for 20,000 steps of 30
# launches and a copy back (600,000 kernels) with the library built by tools/gpu/build.sh, in
# the default link mode (anchors and launch order) and with callback pairs, the writer flushing
# every 200 ms (default) and every 5 s (a larger lag).
# With .devbin carried (tools/gpu/pack_devbin.sh) the traces are checked there: $OUT/long_arrows.txt
# has, per trace, convert's link lines and the report's kernel counts, and the traces (too large
# to bring back) stay there. Without it: $OUT/long_arrows.tar.gz (the .gtrace files). Check them on
# a machine with the analyzer:
#   for f in long_arrows/*/*.gtrace; do gputrace convert --no-advice -o /tmp/x.pftrace $f;
#     gputrace report --json $f | python3 -c 'import json,sys; print(json.load(sys.stdin)["processes"][0]["kernels"])'; done
# Expected: convert's "N kernels linked by ..." equals the report's linked_by_* for each file,
# and convert says nothing of "links not drawn".
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
[ -x build-gpu/sample_apps/tiny_launches ] && [ -e build-gpu/lib/libgputrace.so ] ||
  tools/gpu/build.sh || exit 1
LIB=$PWD/build-gpu/lib/libgputrace.so
W=$(mktemp -d)
mkdir -p "$W/long_arrows"
for mode in order callbacks; do
  for flush in 200 5000; do
    d="$W/long_arrows/${mode}_flush$flush"
    mkdir -p "$d"
    GPUTRACE_DIR="$d" GPUTRACE_CUPTI_LINK=$mode GPUTRACE_FLUSH_MS=$flush LD_PRELOAD="$LIB" \
      timeout 300 build-gpu/sample_apps/tiny_launches 600000 30 >"$d/run.txt" 2>&1
    echo "$mode flush=$flush rc=$? $(ls -s "$d" | tr '\n' ' ')"
  done
done
if [ -x .devbin/bin/gputrace ]; then
  GT() { LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} .devbin/bin/gputrace "$@"; }
  for f in "$W"/long_arrows/*/*.gtrace; do
    echo "== $(basename "$(dirname "$f")"): $(stat -c %s "$f") bytes"
    GT convert --no-advice -o "$W/x.pftrace" "$f" 2>&1 | grep -iE 'link|arrow|not drawn'
    GT report --json "$f" | python3 -c 'import json,sys
for p in json.load(sys.stdin)["processes"]: print("report kernels:", json.dumps(p.get("kernels")))'
  done | tee "$OUT/long_arrows.txt"
else
  tar -C "$W" -czf "$OUT/long_arrows.tar.gz" long_arrows && ls -la "$OUT/long_arrows.tar.gz"
fi
