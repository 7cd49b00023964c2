#!/usr/bin/env bash
# GPU evidence for frameworks that load CUDA themselves (issue 10): a plain-JAX CNN recorded with
# `gputrace record` (the analyzer travels in .devbin), and the overhead: untraced and traced runs
# interleaved. Output: $OUT/jax/.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
R="$OUT/jax"; mkdir -p "$R"
G=$PWD/.devbin/bin/gputrace
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
( cd "$R" && timeout 150 "$G" record -o jax -- python3 "$OLDPWD/sample_apps/train_jax.py" --steps 40 ) \
  >"$R/record.txt" 2>&1
echo "record rc=$?" >>"$R/record.txt"
for rep in 1 2 3; do
  timeout 100 python3 sample_apps/train_jax.py --steps 60 2>&1 | grep steady | sed "s/^/untraced rep$rep /" >>"$R/overhead.txt"
  GPUTRACE_DIR=/tmp/jax-ovh GPUTRACE_QUIET=1 LD_PRELOAD=$PWD/.devbin/lib/libgputrace.so \
    timeout 100 python3 sample_apps/train_jax.py --steps 60 2>&1 | grep steady | sed "s/^/traced rep$rep /" >>"$R/overhead.txt"
  mkdir -p /tmp/jax-ovh; rm -rf /tmp/jax-ovh/*
done
cat "$R/overhead.txt"
