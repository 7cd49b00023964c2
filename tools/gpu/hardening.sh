#!/usr/bin/env bash
# GPU evidence for issue 22 (items 4, 5, 8) and issue 21 item 4 with real CUDA, CUPTI and PyTorch:
#  1. SIGTERM to a PyTorch program with 64 threads busy in CUDA calls: seconds from kill to the end
#     of the process, with and without gputrace; the file must be whole and end with an end record.
#  2. torch.profiler started inside a traced program: gputrace must warn once on stderr and set
#     GT_HDR_OTHER_PROFILER in the header; with GPUTRACE_CUPTI=0 torch.profiler sees kernels.
#  3. A shell started by a traced program leaves no .gtrace file.
# Usage: tools/gpu/build.sh; OUT=... tools/gpu/hardening.sh. Writes $OUT/hardening/ (summary.txt
# says PASS/FAIL per check; stderr of every run kept); tar it into one file if needed.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
O=$OUT/hardening; rm -rf "$O"; mkdir -p "$O"
LIB=${GT_LIB:-$PWD/build-gpu/lib/libgputrace.so}
S=$O/summary.txt; : >"$S"
say() { echo "$*" | tee -a "$S"; }

# A .gtrace scanner (no analyzer on this machine): header flags, chunks, whole or not, END record.
cat >/tmp/gt_scan.py <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
hsize, = struct.unpack_from("<I", d, 12)
flags, = struct.unpack_from("<I", d, 68)
off, chunks, whole, end, lost = hsize, 0, True, None, 0
while off < len(d):
    if len(d) - off < 24: whole = False; break
    magic, plen, seq, crc, count, tid = struct.unpack_from("<6I", d, off)
    if magic != 0x4B435447 or off + 24 + plen > len(d) or zlib.crc32(d[off+24:off+24+plen]) != crc:
        whole = False; break
    p = off + 24
    while p < off + 24 + plen:
        kind, rflags, size = struct.unpack_from("<HHI", d, p)
        if kind == 2: lost += struct.unpack_from("<Q", d, p + 8)[0]
        if kind == 5: end = struct.unpack_from("<QQQQQIi", d, p + 8)
        p += size
    chunks += 1; off += 24 + plen
print(f"flags={flags} chunks={chunks} whole={int(whole)} lost={lost} "
      + (f"end_reason={end[5]} end_signal={end[6]} end_took_ms={(end[1]-end[0])/1e6:.1f} "
         f"end_lost={end[3]} after_end={end[4]}" if end else "end=none"))
PY

# 1. SIGTERM with 64 threads in CUDA calls.
cat >/tmp/gt_threads.py <<'PY'
import threading, torch, sys
x = torch.ones(1024, device="cuda")
def work():
    while True:
        (x * 2).sum().item()   # a kernel, a copy back, a synchronisation: wrapped calls
for _ in range(64):
    threading.Thread(target=work, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
PY
for traced in 0 1; do
  for i in 1 2 3; do
    d=$O/term$traced.$i; mkdir -p "$d"
    if [ $traced = 1 ]; then pre=$LIB; else pre=; fi
    LD_PRELOAD=$pre GPUTRACE_DIR=$d python /tmp/gt_threads.py >"$d/out" 2>"$d/err" &
    pid=$!
    for _ in $(seq 600); do grep -q ready "$d/out" 2>/dev/null && break; sleep 0.1; done
    sleep 3
    t0=$(date +%s.%N); kill -TERM $pid; wait $pid; rc=$?; t1=$(date +%s.%N)
    secs=$(python -c "print(f'{$t1-$t0:.2f}')")
    scan=-; f=$(ls "$d"/*.gtrace 2>/dev/null | head -1)
    [ -n "$f" ] && scan=$(python /tmp/gt_scan.py "$f")
    say "term traced=$traced run=$i rc=$rc exit_after_kill_s=$secs $scan"
  done
done
say "  expect: traced runs exit within ~1 s more than untraced ones, whole=1, end_reason=2 end_signal=15, end_took_ms <= 700"

# 2. torch.profiler inside a traced program.
cat >/tmp/gt_prof.py <<'PY'
import torch
x = torch.randn(256, 256, device="cuda")
(x @ x).sum().item()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
    for _ in range(10):
        (x @ x).sum().item()
    torch.cuda.synchronize()
n = sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)
print("torch.profiler CUDA events", n)
PY
for cupti in 1 0; do
  d=$O/prof$cupti; mkdir -p "$d"
  LD_PRELOAD=$LIB GPUTRACE_DIR=$d GPUTRACE_CUPTI=$cupti python /tmp/gt_prof.py >"$d/out" 2>"$d/err"
  f=$(ls "$d"/*.gtrace 2>/dev/null | head -1)
  say "profiler GPUTRACE_CUPTI=$cupti: $(cat "$d/out") warnings=$(grep -c 'another profiler' "$d/err") $( [ -n "$f" ] && python /tmp/gt_scan.py "$f")"
done
say "  expect: CUPTI=1: 0 CUDA events, warnings=1, flags has 16; CUPTI=0: CUDA events > 0, warnings=0, flags without 16"

# 3. A shell child of a traced program leaves no file.
d=$O/shell; mkdir -p "$d"
LD_PRELOAD=$LIB GPUTRACE_DIR=$d python -c "import subprocess, torch; torch.ones(1, device='cuda'); subprocess.run(['sh', '-c', 'ls >/dev/null'])" 2>"$d/err"
say "shell: $(ls "$d"/*.gtrace 2>/dev/null | wc -l) .gtrace files (expect 1: python's, none for sh)"
