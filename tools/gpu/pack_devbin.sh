#!/usr/bin/env bash
# Pack the analyzer built here (with protobuf-c) for a GPU machine that has none:
# .devbin/bin/gputrace, .devbin/lib/{libgputrace.so,libprotobuf-c.so.1}, and elfutils' libdw.so.1
# and libelf.so.1 (the analyzer's symbolizer; not every GPU machine has elfutils installed).
# Carry .devbin in the run.
# glibc here is older than there, so these binaries run there unchanged.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}
rm -rf .devbin && mkdir -p .devbin/bin .devbin/lib
cp "$B/bin/gputrace" "$B/bin/cupti_dump" "$B/bin/test_order_link" .devbin/bin/
cp "$B/lib/libgputrace.so" .devbin/lib/
[ -f "$B/lib/libcupti_floor.so" ] && cp "$B/lib/libcupti_floor.so" .devbin/lib/
for so in libprotobuf-c.so.1 libdw.so.1 libelf.so.1; do
  cp -L "$(ldconfig -p | awk -v so="$so" '$1 == so {print $NF; exit}')" ".devbin/lib/$so"
done
du -sh .devbin
