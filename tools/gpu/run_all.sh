#!/usr/bin/env bash
# Run on the GPU machine: build, then each part's evidence script (tools/gpu/<part>.sh) given as
# arguments (default: all). Each part writes under $OUT/<part>/; since only a few files come back
# from the machine, each part's folder is packed into $OUT/<part>.tar.gz at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
FINAL_OUT=$OUT
export OUT=/tmp/gputrace-gpu-out
rm -rf "$OUT"; mkdir -p "$OUT"
exec > >(tee -a "$FINAL_OUT/gpu-run.log") 2>&1
bash tools/gpu/build.sh || exit 1
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(interpose workflow stacks cupti)
for p in "${parts[@]}"; do
  [ -f "tools/gpu/$p.sh" ] || { echo "== $p: no script"; continue; }
  echo "== $p: start $(date +%T)"
  mkdir -p "$OUT/$p"
  timeout "${GPU_PART_TIMEOUT:-420}" bash "tools/gpu/$p.sh"; echo "== $p: rc=$? end $(date +%T)"
  tar -C "$OUT" -czf "$FINAL_OUT/$p.tar.gz" "$p"
  ls -la "$FINAL_OUT/$p.tar.gz"
done
