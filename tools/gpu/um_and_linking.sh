#!/usr/bin/env bash
# Issue 30 on the GPU: unified memory and kernels from calls no wrapper sees, on the corpus's
# programs (tools/gpu/corpus_variants.sh records them for the test corpus; this script looks at
# what the recorder of issue 30 does with them):
#   - sample_apps/managed_gemv.cu (cudaMallocManaged + cublasSgemv from 4 OpenMP threads + a
#     kernel of its own, host writes and reads each round), built here with nvcc's default static
#     cudart (the issue's case: no wrapper sees its runtime) and with the shared one, plain, with
#     --prefetch and --advise; the static build also with GPUTRACE_UM=on (the counters from the
#     start: does asking at the first managed allocation, the default, lose anything?), with
#     GPUTRACE_UM=off (what the counters cost), with a callback pair on every launch
#     (GPUTRACE_CUPTI_LINK=callbacks, the reference for the links), and untraced;
#   - PyTorch: ResNet-18 training at batch 32 and ResNet-50 batch-1 inference (cuDNN's legacy
#     batch norm: sample_apps/corpus/resnet_loop.py);
#   - CuPy: matmuls and element-wise work (sample_apps/corpus/cupy_matmul.py).
# Builds libgputrace.so here (build-gpu/, as tools/gpu/build.sh) and the sample with nvcc. The
# analyzer needs protobuf-c, which this machine lacks: when .devbin was carried
# (tools/gpu/pack_devbin.sh), each trace is reported here and the summary shows per trace the
# kernels linked to a call vs "from calls no wrapper sees", the unified-memory section and the
# advice ids; without it the traces come back for the analyzer there.
#
# Run from the repo root on the GPU machine:   OUT=<folder> bash tools/gpu/um_and_linking.sh
# Output: $OUT/um_linking.txt      the summary (facts, each run's rc, wall time, own timing line,
#                                  then per trace: links, unified memory, advice ids, info lines)
#         $OUT/um_linking.tar.gz   um_linking/<case>/{cmd.txt,out.txt,err.txt,run/*.gtrace,
#                                  report.txt,info.txt} and build logs
# Time: about 4 minutes; no run starts past UM_BUDGET_S (default 480) s.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?OUT must name the folder for results}"
REPO=$PWD
W=${UM_WORK:-/tmp/gputrace-um}/um_linking
rm -rf "$(dirname "$W")" && mkdir -p "$W"
SUM=$W/um_linking.txt
: >"$SUM"
T0=$(date +%s)
PY=${PYTHON:-python3}
note() { echo "$*" | tee -a "$SUM"; }
budget_left() { echo $((${UM_BUDGET_S:-480} - ($(date +%s) - T0))); }

# --- libgputrace.so (no analyzer, no samples) and the sample, both builds of its cudart
export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc} PATH=/usr/local/cuda/bin:$PATH
build_library() {
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTRACE_BUILD_ANALYZER=OFF \
    -DGPUTRACE_BUILD_TESTS=OFF -DGPUTRACE_BUILD_SAMPLES=OFF -DCUDA_HOME=/usr/local/cuda \
    >"$W/build.log" 2>&1 && cmake --build build-gpu -j16 --target gputrace_preload >>"$W/build.log" 2>&1
}
if ! build_library && { rm -rf build-gpu; ! build_library; }; then
  tail -30 "$W/build.log"; note "um_and_linking.sh: the library did not build"; exit 1
fi
LIB=$REPO/build-gpu/lib/libgputrace.so
B=$W/bin; mkdir -p "$B"
for rt in static shared; do
  nvcc -O2 -arch=sm_90 -cudart=$rt -Xcompiler -fopenmp -Isample_apps sample_apps/managed_gemv.cu \
    -lcublas -o "$B/managed_gemv_$rt" >>"$W/build.log" 2>&1 || note "managed_gemv ($rt cudart) did not build"
done

# The analyzer, when carried (tools/gpu/pack_devbin.sh): reports here.
G=$REPO/.devbin/bin/gputrace
if [ -x "$G" ]; then
  export LD_LIBRARY_PATH=$REPO/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  note "analyzer: $G"
else
  note "analyzer: none carried (.devbin): traces recorded only, analyze them where protobuf-c is"
  G=
fi
{
  echo "# um_and_linking, $(date -u +%FT%TZ) on $(hostname), git $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  nvcc --version | tail -1
  "$PY" -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())' 2>&1 | tail -1
  "$PY" -c 'import cupy; print("cupy", cupy.__version__)' 2>&1 | tail -1
} | tee -a "$SUM"
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4

# run CASE TIMEOUT [VAR=value...] -- CMD...: recorded (GPUTRACE_VERBOSE=1) unless VAR untraced=1
run() {
  local name=$1 limit=$2 left t1 rc traced=1
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do
    [ "$1" = untraced=1 ] && traced=0 || envs+=("$1")
    shift
  done
  shift
  left=$(budget_left)
  [ "$left" -ge 20 ] || { note "== $name: skipped, budget spent"; return; }
  [ "$limit" -le "$left" ] || limit=$left
  local d=$W/$name
  mkdir -p "$d/run"
  echo "$*" >"$d/cmd.txt"
  [ $traced = 1 ] && envs+=(LD_PRELOAD="$LIB" GPUTRACE_DIR="$d/run" NVTX_INJECTION64_PATH="$LIB"
                            GPUTRACE_VERBOSE=1)
  local t
  t=$(date +%s.%N)
  env "${envs[@]}" timeout -k 10 "$limit" "$@" >"$d/out.txt" 2>"$d/err.txt"
  rc=$?
  t1=$(date +%s.%N)
  note "$(printf '== %s: rc=%d wall=%.1fs %s' "$name" "$rc" "$(awk "BEGIN{print $t1 - $t}")" \
    "$(grep -hE '^CORPUS ' "$d/out.txt" | tail -1)")"
  [ "$rc" -eq 0 ] || tail -4 "$d/err.txt" | sed 's/^/   stderr: /' | tee -a "$SUM"
  # what the recorder said about the static runtime and the unified-memory counters
  grep -hE 'static cudart|unified-memory|UM_|refused' "$d/err.txt" | sort | uniq -c | head -5 |
    sed 's/^/   recorder: /' | tee -a "$SUM"
  [ $traced = 1 ] && [ -n "$G" ] || return
  timeout -k 5 60 "$G" report "$d/run" >"$d/report.txt" 2>&1
  timeout -k 5 30 "$G" info "$d/run" >"$d/info.txt" 2>&1
  grep -E '^  links|^            the most runs' "$d/report.txt" | sed 's/^ */   /' | tee -a "$SUM"
  sed -n '/^== unified memory ==/,/^$/p' "$d/report.txt" | sed -n '2,9p' | sed 's/^ */   um: /' | tee -a "$SUM"
  grep -E '^\s+(unified memory|records|gpu_um|api_launch|gpu_kernel) ' "$d/info.txt" | sort -u |
    sed 's/^ */   info: /' | tee -a "$SUM"
  grep -oE '^  \[(critical|warning|info)\] [a-z-]+' "$d/report.txt" | sed 's/^ */   advice: /' | tee -a "$SUM"
}

M=(4 2048 30)
P=sample_apps/corpus
run managed_static_untraced 60 untraced=1 -- "$B/managed_gemv_static" "${M[@]}"
run managed_static 90 -- "$B/managed_gemv_static" "${M[@]}"
run managed_static_prefetch 90 -- "$B/managed_gemv_static" "${M[@]}" --prefetch
run managed_static_advise 90 -- "$B/managed_gemv_static" "${M[@]}" --advise
run managed_static_um_on 90 GPUTRACE_UM=on -- "$B/managed_gemv_static" "${M[@]}"
run managed_static_um_off 90 GPUTRACE_UM=off -- "$B/managed_gemv_static" "${M[@]}"
run managed_static_callbacks 90 GPUTRACE_CUPTI_LINK=callbacks -- "$B/managed_gemv_static" "${M[@]}"
run managed_shared 90 -- "$B/managed_gemv_shared" "${M[@]}"
run managed_shared_prefetch 90 -- "$B/managed_gemv_shared" "${M[@]}" --prefetch
run resnet_train 150 -- "$PY" "$P/resnet_loop.py" --mode train --model resnet18 --batch-size 32 --steps 40
run resnet_infer_b1 150 -- "$PY" "$P/resnet_loop.py" --mode infer --model resnet50 --batch-size 1 --steps 300
run cupy_matmul 120 -- "$PY" "$P/cupy_matmul.py" --n 512
note "== done in $(( $(date +%s) - T0 )) s"

# Evidence: the summary, and everything in one archive (traces included).
cp "$SUM" "$OUT/um_linking.txt"
tar -C "$(dirname "$W")" -czf "$OUT/um_linking.tar.gz" um_linking
ls -la "$OUT"
