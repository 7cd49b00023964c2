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

  step "a process tree that never touches CUDA"
  mkdir -p "$E/tree"
  GPUTRACE_DIR=$E/tree LD_PRELOAD=$L bash -c 'ls / >/dev/null; python3 -c "print(1)"; sh -c true'
  echo "files left: $(ls "$E/tree" | wc -l)" | tee "$E/tree.txt"

  step "torch.profiler inside a traced program (a second CUPTI subscriber)"
  mkdir -p "$E/prof"
  cat >"$E/prof.py" <<'PY'
import torch
from torch.profiler import profile, ProfilerActivity
x = torch.randn(256, 256, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(20):
        x = x @ x
        x = x / x.norm()
    torch.cuda.synchronize()
kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("torch.profiler saw", len(kernels), "GPU events")
PY
  GPUTRACE_DIR=$E/prof LD_PRELOAD=$L timeout 120 python3 "$E/prof.py" >"$E/prof.out" 2>"$E/prof.err"
  echo "rc=$?"; cat "$E/prof.out"; grep -i "gputrace" "$E/prof.err" | head -5
  "$G" report "$E/prof" >"$E/prof_report.txt" 2>&1; grep -i -B1 -A2 "profiler\|subscriber" "$E/prof_report.txt" | head -12

  step "SIGTERM while traced (time to exit, file whole)"
  mkdir -p "$E/term"
  GPUTRACE_DIR=$E/term LD_PRELOAD=$L python3 sample_apps/train.py --steps 100000 --batch-size 4 \
    >"$E/term.out" 2>"$E/term.err" &
  pid=$!; sleep 12; t0=$(date +%s.%N); kill -TERM $pid; wait $pid; rc=$?; t1=$(date +%s.%N)
  echo "exit status $rc, $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s after SIGTERM" | tee "$E/term.txt"
  "$G" info "$E/term" 2>&1 | tee -a "$E/term.txt" | head -20
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
