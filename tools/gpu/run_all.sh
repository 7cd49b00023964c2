#!/usr/bin/env bash
# Run on the GPU machine: build, then each part's evidence script (tools/gpu/<part>.sh) given as
# arguments (default: all). Each writes under $OUT/<part>/. Logs go to $OUT/gpu-run.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
mkdir -p "$OUT"
exec > >(tee -a "$OUT/gpu-run.log") 2>&1
bash tools/gpu/build.sh || exit 1
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(interpose cupti workflow stacks)
for p in "${parts[@]}"; do
  [ -f "tools/gpu/$p.sh" ] || { echo "== $p: no script"; continue; }
  echo "== $p: start $(date +%T)"
  mkdir -p "$OUT/$p"
  timeout 400 bash "tools/gpu/$p.sh"; echo "== $p: rc=$? end $(date +%T)"
done
