#!/usr/bin/env bash
# One GPU call's evidence for the hardening, doctor and overhead issues (18, 19, 22), with the
# library and analyzer built here and carried in .devbin (tools/gpu/pack_devbin.sh).
#   EV_PARTS="smoke doctor overhead" OUT=... bash tools/gpu/evidence.sh
# Results: $OUT/ev.tar.gz (everything) and $OUT/wp/*.md (the overhead tables).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
E=/tmp/ev; rm -rf "$E"; mkdir -p "$E"
L=$PWD/.devbin/lib/libgputrace.so
G=$PWD/.devbin/bin/gputrace
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONUNBUFFERED=1
parts=" ${EV_PARTS:-smoke doctor overhead} "
has() { [[ $parts == *" $1 "* ]]; }
step() { echo "== $* $(date +%T)"; }

if has smoke; then
  step "record train.py (DataLoader workers: processes without CUDA)"
  ( cd "$E" && timeout 120 "$G" record --lib "$L" -o smoke -- python3 "$OLDPWD/sample_apps/train.py" \
      --steps 15 --warmup 3 --batch-size 16 --workers 2 >record.log 2>&1; echo "rc=$?" >>record.log )
  tail -40 "$E/record.log"; ls -la "$E/smoke.gputrace" | tee "$E/smoke_ls.txt"

  step "hardening (tools/gpu/hardening.sh: SIGTERM with 64 threads, torch.profiler inside, a shell child)"
  # hardening.sh calls `python`: a wrapper, not a symlink (a symlinked venv python loses the venv)
  mkdir -p /tmp/pybin; printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" >/tmp/pybin/python
  chmod +x /tmp/pybin/python
  PATH=/tmp/pybin:$PATH GT_LIB=$L OUT=$E timeout 240 bash tools/gpu/hardening.sh >"$E/hardening.log" 2>&1
  echo "rc=$?"; cat "$E/hardening/summary.txt"
fi

if has doctor && [ -f tools/gpu/doctor.sh ]; then
  step "doctor"
  OUT=$E/doctor_out timeout 180 bash tools/gpu/doctor.sh >"$E/doctor.log" 2>&1; echo "rc=$?"
  tail -60 "$E/doctor.log"
fi

if has overhead; then
  step "whole-process overhead"
  mkdir -p "$OUT/wp"
  python3 tools/bench/whole_process.py bench --lib "$L" --out "$OUT/wp" --model resnet18 --procs 5 \
    --configs untraced,default,torch_profiler --steps 200 --budget-s "${EV_R18_BUDGET:-200}" 2>&1 | tail -12
  python3 tools/bench/whole_process.py bench --lib "$L" --out "$OUT/wp" --model resnet50 --procs 5 \
    --configs untraced,default --budget-s "${EV_R50_BUDGET:-170}" 2>&1 | tail -10
fi
step done
tar -C /tmp -czf "$OUT/ev.tar.gz" ev 2>/dev/null; ls -la "$OUT"
