#!/usr/bin/env bash
# GPU evidence for the wrappers (issue 3.5) and dlsym interposition (issue 10): the cuDNN and copy
# samples (shared cudart), a few PyTorch ResNet-50 training steps, and a ctypes program that reaches
# libcudart only through dlsym — each under LD_PRELOAD=build-gpu/lib/libgputrace.so. cuDNN's own log
# (CUDNN_LOGLEVEL_DBG=3) is kept beside each cuDNN case so the decoded plans (engine index, notes,
# knobs) can be checked against it here with the analyzer.
#
# Output: $OUT/interpose/<case>/*.gtrace, <case>/cudnn.log.gz (cuDNN cases), <case>/stdout.txt,
#         $OUT/interpose/summary.txt (commands, exit codes, file sizes). About 2 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
R="$OUT/interpose"
mkdir -p "$R"
LIB="$PWD/build-gpu/lib/libgputrace.so"
SAMPLES="$PWD/build-gpu/sample_apps"
[ -f "$LIB" ] || { echo "interpose.sh: $LIB missing: run tools/gpu/build.sh first"; exit 1; }
SUMMARY="$R/summary.txt"
echo "# interpose evidence $(date -u +%FT%TZ) $(hostname)" >"$SUMMARY"

# run CASE CUDNN_LOG(0|1) CMD... : one traced run into $R/CASE
run() {
  local name=$1 log=$2
  shift 2
  local dir="$R/$name"
  mkdir -p "$dir"
  local extra=()
  [ "$log" = 1 ] && extra=(CUDNN_LOGLEVEL_DBG=3 CUDNN_LOGDEST_DBG="$dir/cudnn.log")
  local t0=$SECONDS
  timeout 120 env LD_PRELOAD="$LIB" GPUTRACE_DIR="$dir" "${extra[@]}" "$@" >"$dir/stdout.txt" 2>&1
  local rc=$?
  [ -f "$dir/cudnn.log" ] && gzip -f "$dir/cudnn.log"
  echo "$name rc=$rc $((SECONDS - t0))s: $*" >>"$SUMMARY"
  ls -l "$dir" >>"$SUMMARY"
}

for s in conv_backend:heuristic conv_backend:autotune conv_legacy: pageable_copies: sync_every_iter:; do
  app=${s%%:*} arg=${s#*:}
  [ -x "$SAMPLES/$app" ] || { echo "$app: not built" >>"$SUMMARY"; continue; }
  log=0
  case $app in conv_*) log=1 ;; esac
  run "${app}${arg:+_$arg}" $log "$SAMPLES/$app" $arg
done

# PyTorch: few steps keep cuDNN's log small. Heuristic mode with the log; benchmark mode without.
if python3 -c 'import torch, torchvision; assert torch.cuda.is_available()' 2>/dev/null; then
  run resnet50_heuristic 1 python3 sample_apps/train.py --model resnet50 --batch-size 64 --steps 3 --warmup 1
  run resnet50_benchmark 0 python3 sample_apps/train.py --model resnet50 --batch-size 64 --steps 3 --warmup 1 --benchmark
else
  echo "torch with CUDA not available: PyTorch cases skipped" >>"$SUMMARY"
fi

# Issue 10: ctypes resolves every function with dlsym on a handle of libcudart (RTLD_LOCAL):
# each call below must appear once, flagged "via dlsym".
run ctypes_dlsym 0 python3 - <<'PY'
import ctypes, ctypes.util, os, sys
names = ["libcudart.so.13", "libcudart.so.12"]
try:
    import nvidia.cu13 as m  # pip layout used by torch
    names.insert(0, os.path.join(list(m.__path__)[0], "lib", "libcudart.so.13"))
except Exception:
    pass
rt = None
for n in names:
    try:
        rt = ctypes.CDLL(n, mode=os.RTLD_LOCAL)
        break
    except OSError:
        continue
if rt is None:
    sys.exit("no libcudart")
p = ctypes.c_void_p()
for _ in range(3):
    assert rt.cudaMalloc(ctypes.byref(p), 1 << 20) == 0
buf = ctypes.create_string_buffer(1 << 20)
assert rt.cudaMemcpy(p, buf, 1 << 20, 1) == 0
assert rt.cudaDeviceSynchronize() == 0
assert rt.cudaFree(p) == 0
print("ctypes calls done: 3 cudaMalloc, 1 cudaMemcpy (pageable), 1 sync, 1 free")
PY
du -sh "$R" >>"$SUMMARY"
cat "$SUMMARY"
